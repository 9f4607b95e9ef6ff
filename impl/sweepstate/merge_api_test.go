package sweepstate_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// TestMergeDocumentsIsMergeTexts: the pure API over documents gives the
// document whose writing is MergeTexts' text, and changes none of its
// arguments.
func TestMergeDocumentsIsMergeTexts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := drawTriple(t)
		var docs [3]*value.Map
		var before [3]*value.Map
		for i, st := range []sweep.State{tr.o, tr.a, tr.b} {
			if st.Kind == sweep.Parsed {
				docs[i] = st.Doc
				before[i] = value.Clone(st.Doc).(*value.Map)
			}
		}
		pub := sweepstate.PublishedOurs
		if rapid.Bool().Draw(t, "theirs published") {
			pub = sweepstate.PublishedTheirs
		}
		doc, counts, err := sweepstate.MergeDocuments(docs[0], docs[1], docs[2], pub)
		if err != nil {
			t.Fatal(err)
		}
		res, text := sweepstate.MergeTexts(text(tr.o), text(tr.a), text(tr.b), pub)
		if got := yamlsubset.Emit(doc); !bytes.Equal(got, text) {
			t.Fatalf("MergeDocuments writes\n%s\nMergeTexts\n%s", got, text)
		}
		want, _ := res.Payload.MarshalJSON()
		_, _, modelCounts := sweep.Merge(tr.o, tr.a, tr.b, pub == sweepstate.PublishedOurs)
		if counts != (sweepstate.MergeCounts{ItemsMerged: modelCounts.ItemsMerged, SettledByPublished: modelCounts.SettledByPublished,
			CursorsAdvanced: modelCounts.CursorsAdvanced, EvidenceDowngrades: modelCounts.EvidenceDowngrades}) {
			t.Fatalf("counts %+v, MergeTexts %s", counts, want)
		}
		for i := range docs {
			if docs[i] != nil && !value.EqualOrdered(docs[i], before[i]) {
				t.Fatalf("MergeDocuments changed its argument %d", i)
			}
		}
	})
}

// TestMergeRefusals: what the API refuses, and how.
func TestMergeRefusals(t *testing.T) {
	noVersion := value.NewMap()
	noVersion.Set("items", value.NewMap())
	// The side, then the reason MergeTexts gives the same input's text:
	// the load's rules, applied by the load's own code.
	_, _, err := sweepstate.MergeDocuments(nil, noVersion, nil, sweepstate.PublishedOurs)
	if want := "sweepstate: not a state document: ours: the state file has no schema_version"; !errors.Is(err, sweepstate.ErrNotAState) || err.Error() != want {
		t.Errorf("a document without schema_version: %v, want ErrNotAState, %q", err, want)
	}
	badItems := value.NewMap()
	badItems.Set("schema_version", value.Int(1))
	badItems.Set("items", "x")
	_, _, err = sweepstate.MergeDocuments(nil, nil, badItems, sweepstate.PublishedOurs)
	if want := "sweepstate: not a state document: theirs: the state file's items is not a mapping"; !errors.Is(err, sweepstate.ErrNotAState) || err.Error() != want {
		t.Errorf("items not a map: %v, want ErrNotAState, %q", err, want)
	}
	for _, text := range []string{"sources: {}\nitems: {}\n", "schema_version: 1\nitems: x\n"} {
		res, _ := sweepstate.MergeTexts("", text, "", sweepstate.PublishedOurs)
		doc, perr := yamlsubset.ParseString(text)
		if perr != nil {
			t.Fatal(perr)
		}
		_, _, err := sweepstate.MergeDocuments(nil, doc, nil, sweepstate.PublishedOurs)
		// MergeTexts names the side in a CORRUPT reason only.
		if want := "sweepstate: not a state document: ours: " + strings.TrimPrefix(res.Reason, "ours: "); err == nil || err.Error() != want {
			t.Errorf("%q: MergeDocuments %v, MergeTexts %s %q", text, err, res.Word, res.Reason)
		}
	}
	if _, _, err := sweepstate.MergeDocuments(nil, nil, nil, 0); !errors.Is(err, sweepstate.ErrInvalidCommand) {
		t.Errorf("no published side: %v, want ErrInvalidCommand", err)
	}
	if res, text := sweepstate.MergeTexts("", "", "", 7); res.Word != sweepstate.WordError || !errors.Is(res.Err, sweepstate.ErrInvalidCommand) || text != nil {
		t.Errorf("MergeTexts with no published side: %+v %q", res, text)
	}
	res, text := sweepstate.MergeTexts("", "schema_version: 1\n<<<<<<< ours\n", "", sweepstate.PublishedTheirs)
	if res.Word != sweepstate.WordCorrupt || res.Reason != "ours: line 2: line without a colon" || text != nil {
		t.Errorf("conflict markers in ours: %s %q %q", res.Word, res.Reason, text)
	}
	eng := &sweepstate.Engine{}
	if res := eng.Merge("a", "b\xff", "c", sweepstate.PublishedOurs); !errors.Is(res.Err, sweepstate.ErrInvalidCommand) {
		t.Errorf("a path that is not UTF-8: %+v", res)
	}
}

// Two sweeps from one base: each recorded an item and moved the cursor;
// theirs is published. Both items are kept and the cursor is the further.
func ExampleMergeTexts() {
	base := "schema_version: 1\nsources:\n  gh:\n    cursor: \"10\"\nitems: {}\n"
	ours := "schema_version: 1\nsources:\n  gh:\n    cursor: \"12\"\nitems:\n  \"gh:12\":\n    source: \"gh\"\n    id: \"12\"\n"
	theirs := "schema_version: 1\nsources:\n  gh:\n    cursor: \"11\"\nitems:\n  \"gh:11\":\n    source: \"gh\"\n    id: \"11\"\n"
	res, text := sweepstate.MergeTexts(base, ours, theirs, sweepstate.PublishedTheirs)
	payload, _ := res.Payload.MarshalJSON()
	fmt.Printf("%s\n%s\n%s", res.Word, payload, text)
	// Output:
	// OK
	// {"items_merged": 0, "fields_settled_by_published": 0, "cursors_advanced": 1, "evidence_downgrades": 0}
	// schema_version: 1
	// sources:
	//   gh:
	//     cursor: "12"
	// items:
	//   "gh:11":
	//     source: "gh"
	//     id: "11"
	//   "gh:12":
	//     source: "gh"
	//     id: "12"
}
