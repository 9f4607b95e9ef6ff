package sweepcore

import (
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/model/value"
)

// fieldsItem builds an item map from key, value pairs, in the order given
// (Emit writes them in its own order whatever this one).
func fieldsItem(kv ...value.Value) *value.Map {
	m := value.NewMap()
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}

// TestKeepReadsTheItemsOwnFields: closedStatus (validate's keep) and
// hasLegacyFields (what import-legacy's keep asks of an item its file
// names), asked of each entry of a text Emit wrote, exactly as SplitItems
// and ScanItems hand it, answer what the parsed item says. closedStatus:
// the item is a map whose own status is the string "closed" (not one
// like it, not a status below another key, not the entry's key, not a
// status that is a map or list holding "closed"). hasLegacyFields: the
// item is a map holding each field import-legacy copies into it (source,
// status, title, url) as a key of its own, whatever its value ("channel"
// is copied as source, so it does not stand for it).
// Broken on purpose: closedStatus comparing the value without the space
// Emit writes after the colon (no item closed), hasLegacyFields skipping
// its last field (url), hasLegacyFields taking a field whose value is a
// map below it for a missing one; each fails here.
func TestKeepReadsTheItemsOwnFields(t *testing.T) {
	closedMap := fieldsItem("status", "closed")
	all := func(extra ...value.Value) *value.Map {
		return fieldsItem(append([]value.Value{"source", "s", "status", "open", "title", nil, "url", "u"}, extra...)...)
	}
	for _, c := range []struct {
		key            string
		item           value.Value
		closed, legacy bool
	}{
		{"a-closed", fieldsItem("status", "closed"), true, false},
		{"b-closed-every-field", fieldsItem("url", "u", "title", "t", "status", "closed", "source", "s"), true, true},
		{"c-closed-among-more", fieldsItem("source", "s", "status", "closed", "sensitive", true, "title", "t", "url", "u", "body", "b", "zz", value.Int(1)), true, true},
		{"d-closed-after-a-source-map", fieldsItem("source", fieldsItem("status", "open"), "status", "closed"), true, false},
		{"e-open-every-field", all(), false, true},
		{"f-closed-under-source", fieldsItem("source", closedMap, "title", "closed"), false, false},
		{"g-closed-under-another-key", fieldsItem("m", closedMap, "zz", "closed"), false, false},
		{"h-closed-with-a-space", fieldsItem("status", "closed "), false, false},
		{"i-capital", fieldsItem("status", "Closed"), false, false},
		{"j-a-prefix", fieldsItem("status", "close"), false, false},
		{"k-longer", fieldsItem("status", "closedx"), false, false},
		{"l-status-a-map", fieldsItem("status", closedMap), false, false},
		{"m-status-a-list", fieldsItem("status", []value.Value{"closed"}), false, false},
		{"n-status-null", fieldsItem("status", nil), false, false},
		{"o-status-empty", fieldsItem("status", value.NewMap()), false, false},
		{"p-not-a-map", "closed", false, false},
		{"q-empty-map", value.NewMap(), false, false},
		{"r-a-longer-key", fieldsItem("status_", "closed", "statuses", "closed"), false, false},
		{"status", fieldsItem("source", "s"), false, false}, // the key line names status
		{"url", fieldsItem("source", "s", "status", "open", "title", "t"), false, false},
		{"s-no-source", fieldsItem("status", "closed", "title", "t", "url", "u"), true, false},
		{"t-channel-for-source", fieldsItem("channel", "c", "status", "closed", "title", "t", "url", "u"), true, false},
		{"u-no-status", fieldsItem("source", "s", "title", "t", "url", "u"), false, false},
		{"v-no-title", fieldsItem("source", "s", "status", "closed", "url", "u"), true, false},
		{"w-no-url", fieldsItem("source", "s", "status", "closed", "title", "t"), true, false},
		{"x-every-field-as-maps", fieldsItem("source", closedMap, "status", value.NewMap(), "title", closedMap, "url", closedMap), false, true},
		{"y-every-field-null", fieldsItem("source", nil, "status", nil, "title", nil, "url", nil), false, true},
	} {
		t.Run(c.key, func(t *testing.T) {
			items := value.NewMap()
			items.Set("0-before", all("status", "closed"))
			items.Set(c.key, c.item)
			items.Set("~after", all("status", "closed"))
			doc := value.NewMap()
			doc.Set("schema_version", value.Int(1))
			doc.Set("sources", value.NewMap())
			doc.Set("items", items)
			text := string(yamlsubset.Emit(doc))
			asked := 0
			check := func(key, block string) bool {
				if key != c.key {
					return false
				}
				asked++
				if got := closedStatus(block); got != c.closed {
					t.Errorf("closedStatus %v, want %v\n%s", got, c.closed, block)
				}
				if got := hasLegacyFields(block); got != c.legacy {
					t.Errorf("hasLegacyFields %v, want %v\n%s", got, c.legacy, block)
				}
				return false
			}
			if _, _, ok := yamlsubset.SplitItems(text, sweeprules.StateLoad(), check); !ok || asked != 1 {
				t.Fatalf("SplitItems: ok %v, the entry asked of %d times; want once\n%s", ok, asked, text)
			}
			asked = 0
			if _, ok := yamlsubset.ScanItems(strings.NewReader(text), int64(len(text)), sweeprules.StateLoad(), check); !ok || asked != 1 {
				t.Fatalf("ScanItems: ok %v, the entry asked of %d times; want once\n%s", ok, asked, text)
			}
		})
	}
}
