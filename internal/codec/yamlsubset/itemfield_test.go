package yamlsubset_test

import (
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
	"pgregory.net/rapid"
)

// itemFieldNames are the keys Emit puts first in an item, the names
// ItemField is asked for.
var itemFieldNames = []string{"source", "status", "sensitive", "title", "url", "body", "quote", "fix_ref", "verified_revision_id", "verified_at"}

// TestItemFieldReadsEmitsItems: for every entry of an items map Emit
// wrote, as SplitItems and ScanItems hand it to keep, ItemField finds each
// of the item's first-ranked keys exactly when the item has it as a key of
// its own (not below another key, not in an item that is no map), with
// the text Emit wrote after its colon: "" for a map below, the quoted
// string for a string, something for any other value.
// Broken on purpose: the search ending at a key ranked equal (c >= 0)
// finds nothing; reading past the entry (no end at a shallower line)
// finds the next item's keys; skipping no deeper lines finds keys below
// another key; each fails here.
func TestItemFieldReadsEmitsItems(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := append(append([]string(nil), itemFieldNames...), "id", "zz", "N", "status ", "a:b", "é", "\u0085")
		key := rapid.SampledFrom(pool)
		// Leaves the split takes (it declines integers past int64, for
		// one): its own tests cover which it takes.
		leaf := func() value.Value {
			switch rapid.IntRange(0, 4).Draw(t, "leaf") {
			case 0:
				return nil
			case 1:
				return rapid.Bool().Draw(t, "bool")
			case 2:
				return value.Int(rapid.Int64Range(-9, 99).Draw(t, "int"))
			case 3:
				return []value.Value{genString(t, "listed")}
			}
			return genString(t, "string")
		}
		var fieldMap func(depth int) *value.Map
		fieldMap = func(depth int) *value.Map {
			m := value.NewMap()
			for range rapid.IntRange(0, 5).Draw(t, "fields") {
				var v value.Value
				if depth > 0 && rapid.IntRange(0, 3).Draw(t, "nested?") == 0 {
					v = fieldMap(depth - 1)
				} else {
					v = leaf()
				}
				m.Set(key.Draw(t, "key"), v)
			}
			return m
		}
		items := value.NewMap()
		for range rapid.IntRange(1, 4).Draw(t, "items") {
			var item value.Value = fieldMap(1)
			if rapid.IntRange(0, 5).Draw(t, "notAMap?") == 0 {
				item = leaf()
			}
			items.Set(key.Draw(t, "itemKey"), item)
		}
		doc := value.NewMap()
		doc.Set("schema_version", value.Int(1))
		doc.Set("sources", value.NewMap())
		doc.Set("items", items)
		text := string(yamlsubset.Emit(doc))
		asked := 0
		check := func(k, block string) bool {
			asked++
			v, _ := items.Get(k)
			item, isMap := v.(*value.Map)
			for _, name := range itemFieldNames {
				after, found := yamlsubset.ItemField(block, name)
				field, has := value.Value(nil), false
				if isMap {
					field, has = item.Get(name)
				}
				if found != has {
					t.Fatalf("entry %q, %s: found %v, the item has it: %v\n%s", k, name, found, has, block)
				}
				if !found {
					continue
				}
				want := after != ""
				switch f := field.(type) {
				case string:
					want = after == " "+string(yamlsubset.AppendQuoted(nil, f))
				case *value.Map:
					want = (after == "") == (f.Len() > 0)
				}
				if !want {
					t.Fatalf("entry %q, %s: after %q for %#v\n%s", k, name, after, field, block)
				}
			}
			return false
		}
		if _, _, ok := yamlsubset.SplitItems(text, engineRules, check); !ok {
			t.Fatalf("SplitItems declines Emit's text:\n%s", text)
		}
		if asked != items.Len() {
			t.Fatalf("SplitItems asked of %d entries, want %d", asked, items.Len())
		}
		asked = 0
		if _, ok := yamlsubset.ScanItems(strings.NewReader(text), int64(len(text)), engineRules, check); !ok || asked != items.Len() {
			t.Fatalf("ScanItems: ok %v, asked of %d entries, want %d", ok, asked, items.Len())
		}
	})
}

// TestItemFieldEndsAtAKeyNotInEmitsForm: a key in the reference
// writer's own form (a YAML 1.1 word bare) ranks after every name
// ItemField is asked for, so the search ends there; the names before it
// are found. A block given more than its entry ends at the next entry's
// key line, and a line without a colon ends the search. Broken on
// purpose: reading on past a line at two spaces finds the next entry's
// status; reading a line without a colon as a key panics.
func TestItemFieldEndsAtAKeyNotInEmitsForm(t *testing.T) {
	if _, found := yamlsubset.ItemField("  k:\n    - x\n", "status"); found {
		t.Error("status found in a line without a colon")
	}
	if _, found := yamlsubset.ItemField("  k:\n    source: \"s\"\n  j:\n    status: \"closed\"\n", "status"); found {
		t.Error("status found in the next entry")
	}
	block := "  k:\n    source: \"s\"\n    N: 1\n    status: \"closed\"\n"
	if _, found := yamlsubset.ItemField(block, "status"); found {
		t.Error("status found after a key in the reference writer's form")
	}
	if after, found := yamlsubset.ItemField(block, "source"); !found || after != ` "s"` {
		t.Errorf("source: %q, %v", after, found)
	}
}
