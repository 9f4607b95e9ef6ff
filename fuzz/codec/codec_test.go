// Package codec holds the native fuzz targets of the sweep-state codecs: the
// state file text (yamlsubset) and JSON input (pyjson), the two trust
// boundaries where outside bytes enter. Seed corpora live in
// testdata/fuzz/<Target>/; every crash found becomes a seed there.
//
// Run one: go test ./fuzz/codec -run=^$ -fuzz=FuzzParse -fuzztime=60s
package codec

import (
	"bytes"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// FuzzParse: Parse never panics; when it accepts a file, the emitted
// canonical text reads back to an equal document and is a fixed point.
func FuzzParse(f *testing.F) {
	f.Add([]byte("schema_version: 1\nsources: {}\nitems: {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := yamlsubset.Parse(data)
		if err != nil {
			return
		}
		text := yamlsubset.Emit(doc)
		back, err := yamlsubset.Parse(text)
		if doc.Len() == 0 {
			t.Fatalf("Parse accepted a document without keys")
		}
		if err != nil {
			t.Fatalf("canonical text refused: %v\ninput %q\ncanonical %q", err, data, text)
		}
		if !value.Equal(doc, back) {
			t.Fatalf("canonical text reads differently\ninput %q\ncanonical %q", data, text)
		}
		if again := yamlsubset.Emit(back); !bytes.Equal(again, text) {
			t.Fatalf("Emit is not a fixed point\n%q\n%q", text, again)
		}
	})
}

// FuzzDecode: Decode never panics; when it accepts JSON, Encode writes ASCII
// that decodes to the same value with the same key order.
func FuzzDecode(f *testing.F) {
	f.Add(`{"a": [1, 2.5, "x"], "b": null}`)
	f.Add("{\"\u00e9\": [\"\u00fc\U0001F600\u007f\u2028\", \"\\u00e9\"]}")
	f.Fuzz(func(t *testing.T, text string) {
		v, err := pyjson.Decode(text)
		if err != nil {
			return
		}
		enc := pyjson.Encode(v)
		for i, c := range enc {
			if c >= 0x80 {
				t.Fatalf("Encode wrote the non-ASCII byte %#x at %d\ninput %q\nencoded %q", c, i, text, enc)
			}
		}
		back, err := pyjson.Decode(string(enc))
		if err != nil {
			t.Fatalf("encoding refused: %v\ninput %q\nencoded %q", err, text, enc)
		}
		if !value.EqualOrdered(v, back) {
			t.Fatalf("round trip changed the value\ninput %q\nencoded %q", text, enc)
		}
		if again := pyjson.Encode(back); !bytes.Equal(again, enc) {
			t.Fatalf("Encode not stable: %q vs %q", enc, again)
		}
	})
}
