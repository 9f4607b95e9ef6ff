package yamlsubset_test

import (
	"bytes"
	"encoding/base64"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// referenceBench is the bench document as the reference (Python) writer
// writes it (model/sweep's model of that writer), with its forms that are
// not Emit's on a few items and below the other top-level keys: a YAML
// 1.1 word as a bare key in an item (item 3), in a map inside an item
// (5), in sources (a source named off), lease and counts; a bare nan, inf
// and -inf (7); the characters of D6 raw in a string, a key and a list
// (11). Item 9 has NaN in a list, which Emit writes as the reference
// does. pythonItems are the keys of the items that hold a line
// Emit writes otherwise.
func referenceBench() (text string, pythonItems []string) {
	doc := benchDocument(12)
	items, _ := doc.Get("items")
	at := func(i int) (string, *value.Map) {
		k, v := items.(*value.Map).At(i)
		return k, v.(*value.Map)
	}
	k3, it := at(3)
	it.Set("N", value.Int(2))
	it.Set("Null", nil)
	k5, it := at(5)
	meta, _ := it.Get("analysis")
	meta.(*value.Map).Set("No", value.Int(1))
	meta.(*value.Map).Set("OFF", value.Int(0))
	k7, it := at(7)
	it.Set("ratio", math.NaN())
	it.Set("max", math.Inf(1))
	it.Set("min", math.Inf(-1))
	_, it = at(9)
	it.Set("samples", []value.Value{math.NaN(), math.Inf(-1), 2.5})
	k11, it := at(11)
	it.Set("title", "line\u2028sep, next\u0085line, del\x7f, c1\u0090")
	it.Set("a\u0085b", value.Int(1))
	inner := value.NewMap()
	inner.Set("k\u2029", "v\u009f")
	it.Set("list", []value.Value{"x\u2028", inner, math.NaN()})
	sources, _ := doc.Get("sources")
	off := value.NewMap()
	off.Set("cursor", "1")
	sources.(*value.Map).Set("off", off)
	lease, _ := doc.Get("lease")
	lease.(*value.Map).Set("True", "t")
	run, _ := doc.Get("last_run")
	counts, _ := run.(*value.Map).Get("counts")
	counts.(*value.Map).Set("Y", value.Int(2))
	return string(sweep.ReferenceText(doc)), []string{k3, k5, k7, k11}
}

// TestSplitItemsTakesTheReferenceForms: a file the reference writer
// wrote is split, not declined, when its only lines that are not Emit's
// are in that writer's forms that Parse reads on their own as it reads
// Emit's (a YAML 1.1 word as a bare key, a bare nan, inf or -inf, the
// characters of D6 raw in a quoted key, a string or an inline list, below
// the top level). The raw file of every python-written fixture is taken,
// and on the reference bench text the items holding such a line stay in
// the reduced text whatever keep says while the others are split off;
// the reduced text emitted and joined with them is Emit's text of the
// whole file. Every other placement or spelling of those forms, which
// Parse reads otherwise or refuses, is declined.
func TestSplitItemsTakesTheReferenceForms(t *testing.T) {
	none := func(string, string) bool { return false }
	raws := 0
	for name, r := range loadRecordings(t) {
		if !strings.HasPrefix(name, "python-written") {
			continue
		}
		for _, st := range r.Steps {
			if st.Kind != "write" || st.Path != r.State {
				continue
			}
			raw, _ := base64.StdEncoding.DecodeString(st.ContentB64)
			raws++
			if _, _, ok := yamlsubset.SplitItems(string(raw), engineRules, none); !ok {
				t.Errorf("%s: the raw file is declined:\n%s", name, raw)
			}
		}
	}
	if raws < 5 {
		t.Errorf("%d raw python-written files, want 5", raws)
	}

	text, python := referenceBench()
	whole, err := yamlsubset.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := whole.Get("items")
	all := items.(*value.Map)
	for _, keep := range []string{"", python[1], "slack-C002:1700000000.000002"} {
		reduced, others, ok := yamlsubset.SplitItems(text, engineRules, func(k, _ string) bool { return k == keep })
		if !ok {
			t.Fatalf("keep %q: the reference bench text is declined:\n%s", keep, text)
		}
		var want, split []string
		for i := range all.Len() {
			k, _ := all.At(i)
			if slices.Contains(python, k) || k == keep {
				want = append(want, k)
			} else {
				split = append(split, k)
			}
		}
		doc, err := yamlsubset.ParseString(reduced)
		if err != nil {
			t.Fatalf("keep %q: reduced text: %v", keep, err)
		}
		ri, _ := doc.Get("items")
		var got []string
		for i := range ri.(*value.Map).Len() {
			k, _ := ri.(*value.Map).At(i)
			got = append(got, k)
		}
		var gotSplit []string
		for _, b := range others.Blocks() {
			gotSplit = append(gotSplit, b.Key)
		}
		if !slices.Equal(got, want) || !slices.Equal(gotSplit, split) {
			t.Errorf("keep %q: reduced holds %q and %q are split off; want %q and %q", keep, got, gotSplit, want, split)
		}
		var joined countingWriter
		if ok, err := yamlsubset.JoinItemsTo(&joined, yamlsubset.Emit(doc), others); !ok || err != nil {
			t.Fatalf("keep %q: not joined (%v)", keep, err)
		}
		// The entries kept and the runs of text between them reach the
		// writer gathered: this text is one write.
		if joined.writes != 1 {
			t.Errorf("keep %q: %d writes of the joined text, want 1", keep, joined.writes)
		}
		if emitted := yamlsubset.Emit(whole); !bytes.Equal(joined.Bytes(), emitted) {
			t.Errorf("keep %q: joined text\n%s\nwant Emit's\n%s", keep, joined.Bytes(), emitted)
		}
	}

	// The same forms where Parse reads them otherwise, refuses them, or
	// where they would make an items entry or a top-level key of another
	// form: declined.
	const item3 = "    N: 2\n"
	if !strings.Contains(text, item3) || !strings.Contains(text, "    ratio: nan\n") {
		t.Fatalf("the reference bench text lacks its forms:\n%s", text)
	}
	for _, edit := range [][2]string{
		{"schema_version: 1\n", "schema_version: 1\nN: 1\n"},   // a top-level word key
		{"items:\n", "items:\n  N:\n    a: 1\n"},               // an items entry's own key
		{"items:\n", "items:\n  \"0\": nan\n"},                 // an items entry's own value
		{"schema_version: 1\n", "schema_version: 1\na: nan\n"}, // a top-level value
		{item3, "     N: 2\n"},                                 // an odd indent
		{item3, "      N: 2\n"},                                // deeper than the entry's block
		{item3, "    N:  2\n"},                                 // two spaces: Emit never writes them
		{item3, "    N: 2 \n"},                                 // a trailing space
		{item3, "    N:2\n"},                                   // no space: CORRUPT
		{item3, "    N : 2\n"},                                 // the key "N "
		{item3, "    N: 2\n    N: 3\n"},                        // a repeated key
		{item3, "    N: 2\r\n"},
		{item3, "    N: \n"},                                                 // nothing after the space
		{item3, "    x: \n"},                                                 // nothing after the space, after a bare key (the line above is CRLF)
		{item3, "    N: yes\n"},                                              // an ambiguous word: CORRUPT
		{"    ratio: nan\n", "    ratio: NaN\n"},                             // CORRUPT outside a list
		{"    ratio: nan\n", "    ratio: nan \n"},                            // a trailing space
		{"    ratio: nan\n", "    ratio: -nan\n"},                            // CORRUPT
		{"    ratio: nan\n", "    verified_merge_sha: nan\n"},                // the legacy rename
		{"    ratio: nan\n", "    ratio: \"nan\"\n    ratio: nan\n"},         // a repeated key
		{"    ratio: nan\n", "    a: nan\n"},                                 // out of key order
		{"  writer: \"sweeper-1\"\n", "  writer: \"sweeper-1\"\n  A: 1\n"},   // out of the lease order
		{"    ratio: nan\n", "    ratio: \"\\u0041\"\n"},                     // an escape neither writer writes
		{"    ratio: nan\n", "    ratio: \"a\tb\"\n"},                        // a raw tab
		{"    ratio: nan\n", "    ratio: \"a\u2028b\" \n"},                   // a trailing space
		{"    ratio: nan\n", "    \"ratio\": \"a\u2028b\"\n"},                // a bare-shaped key quoted
		{"    ratio: nan\n", "    ratio: [\"a\u2028b\",\"c\"]\n"},            // D6 raw in a list spelled otherwise
		{"    ratio: nan\n", "    ratio: [{\"b\": \"\u2028\", \"a\": 1}]\n"}, // keys out of order
		{"    ratio: nan\n", "    ratio: \"a\u2028b\"\r\n"},                  // CRLF
	} {
		edited := strings.Replace(text, edit[0], edit[1], 1)
		if _, _, ok := yamlsubset.SplitItems(edited, engineRules, none); ok {
			t.Errorf("%q -> %q: taken", edit[0], edit[1])
		}
	}
}

// countingWriter is a bytes.Buffer that counts the writes it gets.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}
