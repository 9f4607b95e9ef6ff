package yamlsubset_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// TestReadJSONFloatsAsPythonPrintsThem: a float in the file comes out of
// the fast path as Python's repr prints the number, whatever digits the
// file spelt it with (a hand edit may write 0.10), and equal to what the
// general path prints for the same file: never the file's own digits.
func TestReadJSONFloatsAsPythonPrintsThem(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"0.10", "0.1"},
		{"1.50", "1.5"},
		{"10.0", "10.0"},
		{"1e5", "100000.0"},
		{"1E+2", "100.0"},
		{"-0.0", "-0.0"},
		{"0.000010", "1e-05"},
		{"12345678901234567.0", "1.2345678901234568e+16"},
	} {
		doc := value.NewMap()
		doc.Set("schema_version", value.Int(1))
		doc.Set("sources", value.NewMap())
		item := value.NewMap()
		item.Set("amount", 0.5)
		items := value.NewMap()
		items.Set("a", item)
		doc.Set("items", items)
		emitted := string(yamlsubset.Emit(doc))
		if !strings.Contains(emitted, "amount: 0.5\n") {
			t.Fatalf("the writer's float line changed:\n%s", emitted)
		}
		text := []byte(strings.Replace(emitted, "amount: 0.5\n", "amount: "+c.file+"\n", 1))
		out, ok := yamlsubset.ReadJSON(bytes.NewReader(text), int64(len(text)), int64(len(text)), engineRules)
		if !ok {
			t.Fatalf("%s: declined", c.file)
		}
		got := string(textBytes(t, out))
		if !strings.Contains(got, `"amount": `+c.want+`}`) {
			t.Errorf("%s: fast path printed %s, want the number as %s", c.file, got, c.want)
		}
		parsed, err := yamlsubset.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if general := string(pyjson.Encode(parsed)); got != general {
			t.Errorf("%s: fast path %s, general path %s", c.file, got, general)
		}
	}
}
