package sweepstate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// asPayload is a document as an embedder holds it: the JSON of a Payload,
// read back through Payload.UnmarshalJSON.
func asPayload(t interface{ Fatal(...any) }, doc *value.Map) sweepstate.Payload {
	var p sweepstate.Payload
	if err := json.Unmarshal(pyjson.Encode(doc), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func marshal(t interface{ Fatal(...any) }, p sweepstate.Payload) []byte {
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMergeDocumentsIsMergeTexts: the pure API over documents gives the
// document whose file is MergeTexts' text, and changes none of its
// arguments.
func TestMergeDocumentsIsMergeTexts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := drawTriple(t)
		var docs [3]sweepstate.Payload
		var before [3][]byte
		for i, st := range []sweep.State{tr.o, tr.a, tr.b} {
			if st.Kind == sweep.Parsed {
				docs[i] = asPayload(t, st.Doc)
			}
			before[i] = marshal(t, docs[i])
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
		merged, perr := yamlsubset.ParseString(string(text))
		if perr != nil {
			t.Fatal(perr)
		}
		if got, want := marshal(t, doc), pyjson.Encode(merged); !bytes.Equal(got, want) {
			t.Fatalf("MergeDocuments gives\n%s\nMergeTexts' file holds\n%s", got, want)
		}
		want := marshal(t, res.Payload)
		_, _, modelCounts := sweep.Merge(tr.o, tr.a, tr.b, pub == sweepstate.PublishedOurs)
		if counts != (sweepstate.MergeCounts{ItemsMerged: modelCounts.ItemsMerged, SettledByPublished: modelCounts.SettledByPublished,
			CursorsAdvanced: modelCounts.CursorsAdvanced, EvidenceDowngrades: modelCounts.EvidenceDowngrades}) {
			t.Fatalf("counts %+v, MergeTexts %s", counts, want)
		}
		for i := range docs {
			if got := marshal(t, docs[i]); !bytes.Equal(got, before[i]) {
				t.Fatalf("MergeDocuments changed its argument %d:\n%s\nwas\n%s", i, got, before[i])
			}
		}
	})
}

// TestMergeDocumentsOfReads: the documents Read answers merge as their
// files do, and the Payload keeps an integer beyond 64 bits and a float's
// text through JSON.
func TestMergeDocumentsOfReads(t *testing.T) {
	dir := t.TempDir()
	texts := [3]string{
		"schema_version: 1\nsources:\n  gh:\n    cursor: \"10\"\nitems: {}\n",
		"schema_version: 1\nsources:\n  gh:\n    cursor: \"12\"\nitems:\n  \"gh:12\":\n    source: \"gh\"\n    id: \"12\"\n    n: 1180591620717411303424\n",
		"schema_version: 1\nsources:\n  gh:\n    cursor: \"11\"\nitems:\n  \"gh:11\":\n    source: \"gh\"\n    id: \"11\"\n    f: 1.0\n",
	}
	eng := &sweepstate.Engine{}
	var docs [3]sweepstate.Payload
	for i, text := range texts {
		path := filepath.Join(dir, fmt.Sprint(i, ".yml"))
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		res := eng.Run(path, sweepstate.Read{})
		if res.Word != sweepstate.WordOK {
			t.Fatalf("read %d: %s %s", i, res.Word, res.Reason)
		}
		// Through JSON and back, as a caller that stores documents would.
		stored, err := json.Marshal(res.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(stored, &docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	doc, counts, err := sweepstate.MergeDocuments(docs[0], docs[1], docs[2], sweepstate.PublishedTheirs)
	if err != nil {
		t.Fatal(err)
	}
	res, text := sweepstate.MergeTexts(texts[0], texts[1], texts[2], sweepstate.PublishedTheirs)
	merged, perr := yamlsubset.ParseString(string(text))
	if perr != nil {
		t.Fatal(perr)
	}
	if got, want := marshal(t, doc), pyjson.Encode(merged); !bytes.Equal(got, want) {
		t.Fatalf("MergeDocuments of the reads gives\n%s\nMergeTexts' file holds\n%s", got, want)
	}
	if got := marshal(t, doc); !bytes.Contains(got, []byte(`"n": 1180591620717411303424`)) || !bytes.Contains(got, []byte(`"f": 1.0`)) {
		t.Errorf("the numbers did not keep their text: %s", got)
	}
	if want := marshal(t, res.Payload); counts.CursorsAdvanced != 1 || !bytes.Contains(want, []byte(`"cursors_advanced": 1`)) {
		t.Errorf("counts %+v, MergeTexts %s", counts, want)
	}
}

// TestPayloadUnmarshalJSON: what a Payload reads from JSON and what it
// refuses.
func TestPayloadUnmarshalJSON(t *testing.T) {
	var p sweepstate.Payload
	if err := json.Unmarshal([]byte(`{"b": 1, "a": [1.50, 2e3, 18446744073709551616], "b": 2}`), &p); err != nil {
		t.Fatal(err)
	}
	// A later duplicate replaces the value in its first place, as json.loads does.
	if got, want := string(marshal(t, p)), `{"b": 2, "a": [1.5, 2000.0, 18446744073709551616]}`; got != want {
		t.Errorf("read %s, want %s", got, want)
	}
	if err := json.Unmarshal([]byte(`null`), &p); err != nil || !p.IsZero() {
		t.Errorf("null: %v, zero %v", err, p.IsZero())
	}
	for _, text := range []string{`[1]`, `"x"`, `1`} {
		if err := json.Unmarshal([]byte(text), &p); err == nil {
			t.Errorf("%s read as a payload", text)
		}
	}
}

// TestMergeRefusals: what the API refuses, and how.
func TestMergeRefusals(t *testing.T) {
	noVersion := value.NewMap()
	noVersion.Set("items", value.NewMap())
	// The side, then the reason MergeTexts gives the same input's text:
	// the load's rules, applied by the load's own code.
	_, _, err := sweepstate.MergeDocuments(sweepstate.Payload{}, asPayload(t, noVersion), sweepstate.Payload{}, sweepstate.PublishedOurs)
	if want := "sweepstate: not a state document: ours: the state file has no schema_version"; !errors.Is(err, sweepstate.ErrNotAState) || err.Error() != want {
		t.Errorf("a document without schema_version: %v, want ErrNotAState, %q", err, want)
	}
	badItems := value.NewMap()
	badItems.Set("schema_version", value.Int(1))
	badItems.Set("items", "x")
	_, _, err = sweepstate.MergeDocuments(sweepstate.Payload{}, sweepstate.Payload{}, asPayload(t, badItems), sweepstate.PublishedOurs)
	if want := "sweepstate: not a state document: theirs: the state file's items is not a mapping"; !errors.Is(err, sweepstate.ErrNotAState) || err.Error() != want {
		t.Errorf("items not a map: %v, want ErrNotAState, %q", err, want)
	}
	for _, text := range []string{"sources: {}\nitems: {}\n", "schema_version: 1\nitems: x\n"} {
		res, _ := sweepstate.MergeTexts("", text, "", sweepstate.PublishedOurs)
		doc, perr := yamlsubset.ParseString(text)
		if perr != nil {
			t.Fatal(perr)
		}
		_, _, err := sweepstate.MergeDocuments(sweepstate.Payload{}, asPayload(t, doc), sweepstate.Payload{}, sweepstate.PublishedOurs)
		// MergeTexts names the side in a CORRUPT reason only.
		if want := "sweepstate: not a state document: ours: " + strings.TrimPrefix(res.Reason, "ours: "); err == nil || err.Error() != want {
			t.Errorf("%q: MergeDocuments %v, MergeTexts %s %q", text, err, res.Word, res.Reason)
		}
	}
	if _, _, err := sweepstate.MergeDocuments(sweepstate.Payload{}, sweepstate.Payload{}, sweepstate.Payload{}, 0); !errors.Is(err, sweepstate.ErrInvalidCommand) {
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
