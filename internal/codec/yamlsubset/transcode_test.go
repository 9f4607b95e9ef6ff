package yamlsubset_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/storage/outtext"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/model/value"
)

// TestReadJSONLongLinesAndLimit: lines longer than the reader's buffer are
// transcoded whole (a value of 600,000 bytes, one split across reads),
// text equal to the document's json.dumps, whatever the size hint (none,
// too small, so that lines outgrow their chunk, exact, too large); a limit
// below the text's length, or text cut short of its final newline, is
// declined.
func TestReadJSONLongLinesAndLimit(t *testing.T) {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	doc.Set("sources", value.NewMap())
	items := value.NewMap()
	for i, n := range []int{600_000, 10, 300_000} {
		it := value.NewMap()
		it.Set("body", strings.Repeat("é", n/2)+strings.Repeat("x", n%7))
		items.Set(string(rune('a'+i)), it)
	}
	doc.Set("items", items)
	text := yamlsubset.Emit(doc)
	want := pyjson.Encode(doc)
	for _, size := range []int64{0, int64(len(text)) / 3, int64(len(text)), 10 * int64(len(text))} {
		out, ok := yamlsubset.ReadJSON(bytes.NewReader(text), size, int64(len(text)), engineRules)
		if !ok {
			t.Fatalf("size %d: declined the engine's own text", size)
		}
		if got := textBytes(t, out); !bytes.Equal(got, want) {
			t.Fatalf("size %d: text of %d bytes differs from json.dumps's %d", size, len(got), len(want))
		}
	}
	if _, ok := yamlsubset.ReadJSON(bytes.NewReader(text), int64(len(text)), int64(len(text))-1, engineRules); ok {
		t.Error("took a text longer than the limit")
	}
	if _, ok := yamlsubset.ReadJSON(bytes.NewReader(text[:len(text)-1]), int64(len(text)), int64(len(text)), engineRules); ok {
		t.Error("took a text without its final newline")
	}
}

// TestReadJSONSmallBuffers: read through buffers from one byte up (every
// line across a read, the keys that order the next line kept across it),
// the benchmark document and tools/sweepbench's file come out as
// json.dumps writes them, and a key out of order or repeated in a later
// read than the key before it is still declined.
func TestReadJSONSmallBuffers(t *testing.T) {
	text := yamlsubset.Emit(benchDocument(30))
	doc, err := yamlsubset.Parse(text) // in the file's key order
	if err != nil {
		t.Fatal(err)
	}
	want := pyjson.Encode(doc)
	// tools/sweepbench's file: every line of its items is one run takes,
	// most by the shape of the item before, so the reads cut run's loop
	// at every place; the keys out of order are in an item read by shape.
	sweep := benchseed.SweepState(30)
	sweepDoc, err := yamlsubset.Parse(sweep)
	if err != nil {
		t.Fatal(err)
	}
	sweepWant := pyjson.Encode(sweepDoc)
	sweepSwapped := bytes.Replace(sweep, []byte("    title: \"Item 7:"), []byte("    url: \"x\"\n    title: \"Item 7:"), 1)
	sweepRepeated := bytes.Replace(sweep, []byte("    title: \"Item 7:"), []byte("    status: \"x\"\n    title: \"Item 7:"), 1)
	swapped := bytes.Replace(text, []byte("    title:"), []byte("    url: \"x\"\n    title:"), 1) // url before title
	repeated := bytes.Replace(text, []byte("    title:"), []byte("    status: \"x\"\n    title:"), 1)
	for _, size := range []int{1, 7, 64, 1000} {
		old := yamlsubset.SetReadBuffer(size)
		out, ok := yamlsubset.ReadJSON(bytes.NewReader(text), 0, int64(len(text)), engineRules)
		if got := textBytes(t, out); !ok || !bytes.Equal(got, want) {
			t.Errorf("buffer %d: ok %v, %d bytes; want json.dumps's %d", size, ok, len(got), len(want))
		}
		out, ok = yamlsubset.ReadJSON(bytes.NewReader(sweep), 0, int64(len(sweep)), engineRules)
		if got := textBytes(t, out); !ok || !bytes.Equal(got, sweepWant) {
			t.Errorf("buffer %d, sweepbench's file: ok %v, %d bytes; want json.dumps's %d", size, ok, len(got), len(sweepWant))
		}
		for _, bad := range [][]byte{swapped, repeated, sweepSwapped, sweepRepeated} {
			if _, ok := yamlsubset.ReadJSON(bytes.NewReader(bad), 0, int64(len(bad)), engineRules); ok {
				t.Errorf("buffer %d: took keys out of order", size)
			}
		}
		yamlsubset.SetReadBuffer(old)
	}
}

// textBytes is the whole of a transcoded text, as a writer receives it.
func textBytes(t *testing.T, out *outtext.Text) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := out.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadJSONLongListOnShape: an inline list longer than the room left
// in the output chunk, on a line read by the shape of the item before
// (shapedLines), comes out whole. The room shapedLines keeps free is an
// eighth of the chunk (at most a quarter of chunkSize), which a line of a
// list can outgrow: once with no size hint (a first chunk of 64 KiB), and
// once with the file's own size, the hint read passes, where a body of
// non-ASCII text (two bytes each in the file, six in the text) has filled
// the first chunk and its filler the next to within that eighth. (Each
// list line fits in the reader's window with the items before it, so the
// shape of the item before is still run's.)
func TestReadJSONLongListOnShape(t *testing.T) {
	doc := func(accents, fill, labels int) *value.Map {
		doc := value.NewMap()
		doc.Set("schema_version", value.Int(1))
		doc.Set("sources", value.NewMap())
		items := value.NewMap()
		add := func(name, body string, labels int) {
			it := value.NewMap()
			it.Set("status", "new")
			it.Set("body", body)
			it.Set("labels", slices.Repeat([]value.Value{"abcd"}, labels))
			items.Set(name, it)
		}
		add("a", strings.Repeat("é", accents), 1)
		for i := range fill {
			add(fmt.Sprintf("b%04d", i), strings.Repeat("x", 1000), 1)
		}
		add("c", "x", labels) // a list line of 8 bytes a label
		add("d", "x", 1)
		doc.Set("items", items)
		return doc
	}
	for _, c := range []struct {
		name                  string
		accents, fill, labels int
		exact                 bool
	}{
		{"no size hint", 1, 2, 20000, false},
		{"the file's size", 400000, 910, 40000, true},
	} {
		d := doc(c.accents, c.fill, c.labels)
		text := yamlsubset.Emit(d)
		want := pyjson.Encode(d)
		size := int64(0)
		if c.exact {
			size = int64(len(text))
		}
		out, ok := yamlsubset.ReadJSON(bytes.NewReader(text), size, int64(len(text)), engineRules)
		if !ok {
			t.Fatalf("%s: declined the engine's own text", c.name)
		}
		if got := textBytes(t, out); !bytes.Equal(got, want) {
			t.Errorf("%s: text of %d bytes differs from json.dumps's %d", c.name, len(got), len(want))
		}
	}
}
