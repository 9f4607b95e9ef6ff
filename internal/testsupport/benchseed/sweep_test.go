package benchseed_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// TestSweepPythonWritten: the python-written bench file is what the model
// of the Python writer (model/sweep.ReferenceText) writes for the bench
// document whose N and ratio fields are an integer and a NaN float: it
// reads as the document with ratio the string "nan", it is not this
// engine's text (Emit quotes N, off and "nan").
func TestSweepPythonWritten(t *testing.T) {
	const n = 250
	text := benchseed.SweepPythonWritten(n)
	doc, err := yamlsubset.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := doc.Get("items")
	floats := value.NewMap() // the document the Python side held
	for i := range doc.Len() {
		k, v := doc.At(i)
		if k == "items" {
			v = value.NewMap()
		}
		floats.Set(k, v)
	}
	withForms := 0
	for i := range items.(*value.Map).Len() {
		k, v := items.(*value.Map).At(i)
		it := v.(*value.Map)
		if r, ok := it.Get("ratio"); ok {
			withForms++
			if r != "nan" || !it.Has("N") {
				t.Errorf("item %s: ratio %v, N present %v", k, r, it.Has("N"))
			}
			c := value.NewMap()
			for j := range it.Len() {
				f, fv := it.At(j)
				if f == "ratio" {
					fv = math.NaN()
				}
				c.Set(f, fv)
			}
			it = c
		}
		fm, _ := floats.Get("items")
		fm.(*value.Map).Set(k, it)
	}
	if withForms != 3 {
		t.Errorf("%d items with the Python forms, want 3 of %d", withForms, n)
	}
	if ref := sweep.ReferenceText(floats); !bytes.Equal(ref, text) {
		t.Errorf("not the Python writer's text:\n%s\nwant\n%s", text, ref)
	}
	if bytes.Equal(yamlsubset.Emit(doc), text) {
		t.Error("the python-written bench file is this engine's own text")
	}
	for _, line := range []string{"\n    N: 1\n", "\n    ratio: nan\n", "\n  off:\n"} {
		if !strings.Contains(string(text), line) {
			t.Errorf("no line %q", line)
		}
	}
}

// TestSweepFormsTakeTheirPaths: the hand-edited file and the reindented
// one hold the canonical file's document, keys in the same order; the
// fast paths (read's transcoder and the split) take the canonical and the
// hand-edited files and decline the reindented one, which the tests and
// tools/sweepbench use as the general path's file.
func TestSweepFormsTakeTheirPaths(t *testing.T) {
	want, err := yamlsubset.Parse(benchseed.SweepState(5))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		text []byte
		fast bool
	}{
		{"canonical", benchseed.SweepState(5), true},
		{"hand-edited", benchseed.SweepHandEdited(5), true},
		{"reindented", benchseed.SweepReindented(5), false},
	} {
		doc, err := yamlsubset.Parse(c.text)
		if err != nil || !bytes.Equal(pyjson.Encode(doc), pyjson.Encode(want)) {
			t.Errorf("%s: not the canonical file's document (%v)", c.name, err)
		}
		_, read := yamlsubset.ReadJSON(bytes.NewReader(c.text), int64(len(c.text)), int64(len(c.text)), sweeprules.StateLoad())
		_, _, split := yamlsubset.SplitItems(string(c.text), sweeprules.StateLoad(), func(string, string) bool { return false })
		if read != c.fast || split != c.fast {
			t.Errorf("%s: read's fast path %v, the split %v; want %v", c.name, read, split, c.fast)
		}
	}
}
