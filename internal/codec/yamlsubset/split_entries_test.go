package yamlsubset_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// TestSplitAllItemsWalksTheEntries: SplitAllItems declines what SplitItems
// declines and gives its reduced text (keeping no entry it may leave
// out); its walk meets every entry of items in file order, each from its
// key line to the next one: those SplitItems lists as left out, as it
// lists them, and between them exactly the entries the reduced text keeps
// (their keys the items of the document parsed from it). NextIs takes an
// entry given its very text, and nothing else: not a prefix of it, nor
// another entry's text. Texts: the reference writer's, hand-edited ones
// (comments and blank lines in and between entries), escaped keys,
// scalar items, no items, and generated documents.
func TestSplitAllItemsWalksTheEntries(t *testing.T) {
	python, _ := referenceBench()
	base := string(yamlsubset.Emit(benchDocument(30)))
	texts := []string{
		base,
		python,
		"# top\n\n" + strings.Replace(base, "items:\n", "items:\n  # first\n\n", 1),
		strings.Replace(base, "    status: \"analyzed\"", "    # the status\n    status: \"analyzed\"", 3),
		"schema_version: 1\nsources: {}\nitems:\n# c\n  a:\n    x: 1\n  # between\n  b:\n    x: 2\n\t \n# end\n",
		"schema_version: 1\nsources: {}\nitems:\n  a: 1\n  b: 2\n  \"c d\":\n    x: 1\nzz: 1\n",
		"schema_version: 1\nsources: {}\nitems:\n  \"a\\u2028\":\n    x: 1\n  \"b\\\"\": 3\nlast_run:\n  timestamp: \"t\"\n",
		"schema_version: 1\nsources: {}\nitems: {}\n",
		strings.Replace(base, "  writer:", "  writer :", 1), // not canonical
		"",
	}
	for ti, text := range texts {
		checkSplitAllItems(t, text, ti < len(texts)-2)
	}
	rapid.Check(t, func(rt *rapid.T) {
		text := string(yamlsubset.Emit(genDocument(rt)))
		if rapid.Bool().Draw(rt, "comment?") {
			lines := strings.SplitAfter(text, "\n")
			at := rapid.IntRange(0, len(lines)-1).Draw(rt, "comment at")
			text = strings.Join(lines[:at], "") + "  # a note\n" + strings.Join(lines[at:], "")
		}
		checkSplitAllItems(rt, text, false)
	})
}

func checkSplitAllItems(t interface {
	Fatalf(string, ...any)
	Fatal(...any)
}, text string, wantOK bool) {
	none := func(string, string) bool { return false }
	reduced, entries, ok := yamlsubset.SplitAllItems(text, engineRules)
	wantReduced, others, splitOK := yamlsubset.SplitItems(text, engineRules, none)
	if ok != splitOK || reduced != wantReduced {
		t.Fatalf("SplitAllItems: ok %v, SplitItems ok %v; reduced texts equal: %v\n%s", ok, splitOK, reduced == wantReduced, text)
	}
	if wantOK && !ok {
		t.Fatalf("declined\n%s", text)
	}
	if !ok {
		if _, more := entries.Key(); more {
			t.Fatal("a declined text has entries to walk")
		}
		return
	}
	var kept []string
	if doc, err := yamlsubset.ParseString(reduced); err == nil {
		if items, isMap := doc.Get("items"); isMap {
			if m, isMap := items.(*value.Map); isMap {
				kept = m.Keys()
			}
		}
	} else {
		t.Fatalf("the reduced text does not parse: %v", err)
	}
	var listed []yamlsubset.ItemBlock
	if others != nil {
		listed = others.Blocks()
	}
	end := -1
	for {
		key, more := entries.Key()
		if !more {
			break
		}
		ahead := entries
		at := entries.At()
		b := entries.Next()
		if b.Key != key || b.Start != at || end >= 0 && b.Start != end {
			t.Fatalf("entry %q at %d after an entry ending at %d (Key said %q)", b.Key, b.Start, end, key)
		}
		end = b.End
		// NextIs takes the entry by its text, and neither a prefix of it
		// nor the entry after it.
		block := text[b.Start:b.End]
		if trimmed := block[:strings.LastIndexByte(block[:len(block)-1], '\n')+1]; trimmed != "" {
			if probe := ahead; probe.NextIs(trimmed) {
				t.Fatalf("NextIs took %q, a prefix of entry %q", trimmed, key)
			}
		}
		if next := entries; b.End < len(text) {
			if _, more := next.Key(); more {
				nb := next.Next()
				if probe := ahead; probe.NextIs(text[nb.Start:nb.End]) && text[nb.Start:nb.End] != block {
					t.Fatalf("NextIs took entry %q for %q", nb.Key, key)
				}
			}
		}
		if !ahead.NextIs(block) || ahead != entries {
			t.Fatalf("NextIs did not take entry %q by its text", key)
		}
		if len(listed) > 0 && listed[0] == b {
			listed = listed[1:]
			continue
		}
		if len(kept) == 0 || kept[0] != key {
			t.Fatalf("entry %q (%d-%d) is neither listed by SplitItems nor kept in the reduced text\n%s", key, b.Start, b.End, text)
		}
		kept = kept[1:]
	}
	if len(listed) != 0 || len(kept) != 0 {
		t.Fatalf("the walk missed %d listed and %d kept entries", len(listed), len(kept))
	}
}
