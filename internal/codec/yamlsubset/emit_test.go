package yamlsubset_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// mustDecode builds a value from JSON text, keeping its key order.
func mustDecode(t *testing.T, text string) *value.Map {
	t.Helper()
	v, err := pyjson.Decode(text)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*value.Map)
}

func TestEmitKeyOrderByDepth(t *testing.T) {
	doc := mustDecode(t, `{
		"zz": {"status": 1, "a": {"status": 2, "a": 3, "source": 4}},
		"last_run": {"note": 1, "counts": {"z": 1, "status": 2}, "writer": "w", "outcome": "o", "timestamp": "t"},
		"items": {"b:1": {"x": 1, "id": "1", "verified_at": 1, "source": "b", "lease": {"ttl_minutes": 1, "writer": 2}}, "a:1": {}},
		"aa": 1,
		"lease": {"zz": 1, "ttl_minutes": 60, "timestamp": "t", "writer": "w", "nested": {"b": 1, "title": 2}},
		"sources": {"s2": {"cursor": "1", "sensitive": true}, "s1": {"cursor": "2"}},
		"schema_version": 1
	}`)
	want := `schema_version: 1
lease:
  writer: "w"
  timestamp: "t"
  ttl_minutes: 60
  nested:
    title: 2
    b: 1
  zz: 1
sources:
  s1:
    cursor: "2"
  s2:
    sensitive: true
    cursor: "1"
items:
  "a:1": {}
  "b:1":
    source: "b"
    verified_at: 1
    id: "1"
    lease:
      ttl_minutes: 1
      writer: 2
    x: 1
last_run:
  timestamp: "t"
  outcome: "o"
  writer: "w"
  counts:
    status: 2
    z: 1
  note: 1
aa: 1
zz:
  a:
    source: 4
    status: 2
    a: 3
  status: 1
`
	if got := string(yamlsubset.Emit(doc)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestEmitKeysAndStrings(t *testing.T) {
	doc := value.NewMap()
	for _, k := range []string{"plain", "a.b-c_d", "key\n", "true", "n", "NULL", "yes", "Off", "tRUE", "9x", "é", "\u0085k", "\u2028"} {
		doc.Set(k, value.Int(1))
	}
	doc.Set("s", "\"\\\n\r\t\b\f\x00\x1f\x7f\u0080\u0085\u009f\u00a0\u2028\u2029\ufeff\ufffe\uffffé😀</>&\xff")
	doc.Set("list", []value.Value{"\u2028", map1("b", "\u007f", "a", math.Copysign(0, -1)), []value.Value{}, value.NewMap()})
	huge, _ := new(big.Int).SetString("-1234567890123456789012345678901234567890", 10)
	doc.Set("big", huge)
	doc.Set("floats", []value.Value{1e16, 1e-5, 123456789.0, 5e-324})
	got := string(yamlsubset.Emit(doc))
	for _, line := range []string{
		"plain: 1\n", "a.b-c_d: 1\n", "\"key\\n\": 1\n", "\"true\": 1\n", "\"n\": 1\n", "\"NULL\": 1\n", "\"yes\": 1\n",
		"\"Off\": 1\n", "tRUE: 1\n", "\"9x\": 1\n", "\"é\": 1\n", "\"\\u0085k\": 1\n", "\"\\u2028\": 1\n",
		"s: \"\\\"\\\\\\n\\r\\t\\b\\f\\u0000\\u001f\\u007f\\u0080\\u0085\\u009f\u00a0\\u2028\\u2029\ufeff\\ufffe\\uffffé😀</>&\ufffd\"\n",
		"list: [\"\\u2028\", {\"a\": -0.0, \"b\": \"\\u007f\"}, [], {}]\n",
		"big: -1234567890123456789012345678901234567890\n",
		"floats: [1e+16, 1e-05, 123456789.0, 5e-324]\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing line %q in:\n%s", line, got)
		}
	}
}

func map1(kv ...any) *value.Map {
	m := value.NewMap()
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}

// TestReadPayloadsMatchFixtures: the stdout payload of a recorded read is the
// previous state file as json.dumps, sources and items appended when absent.
// Files holding verified_merge_sha are skipped: the engine renames that
// field on load, which is not the codec's business.
func TestReadPayloadsMatchFixtures(t *testing.T) {
	n := 0
	for name, rec := range loadRecordings(t) {
		for i, st := range rec.Steps {
			if st.Kind != "run" || len(st.Args) == 0 || st.Args[0] != "read" || !strings.HasPrefix(st.Stdout, "OK\n") {
				continue
			}
			if strings.Contains(*st.StateAfter, "verified_merge_sha") {
				continue
			}
			doc, err := yamlsubset.Parse([]byte(*st.StateAfter))
			if err != nil {
				t.Errorf("%s step %d: %v", name, i, err)
				continue
			}
			for _, k := range []string{"sources", "items"} {
				if !doc.Has(k) {
					doc.Set(k, value.NewMap())
				}
			}
			want := strings.TrimPrefix(st.Stdout, "OK\n")
			if got := string(pyjson.Encode(doc)) + "\n"; got != want {
				t.Errorf("%s step %d: payload differs\n%s", name, i, firstDiff(strings.ReplaceAll(got, ", ", ",\n"), strings.ReplaceAll(want, ", ", ",\n")))
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d read payloads checked", n)
	}
}

// TestEmitRefusesUnknownTypes: a value no codec produces (a Go int, a
// struct) is a defect of the caller; Emit panics instead of writing null.
func TestEmitRefusesUnknownTypes(t *testing.T) {
	for _, v := range []value.Value{5, struct{}{}, []value.Value{int8(1)}} {
		doc := value.NewMap()
		doc.Set("k", v)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Emit of %T did not panic", v)
				}
			}()
			out := yamlsubset.Emit(doc)
			t.Errorf("Emit of %T wrote %q", v, out)
		}()
	}
}
