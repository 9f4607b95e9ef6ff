package yamlsubset_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"
)

// TestEmitParseRoundTrip: Parse(Emit(x)) equals x and Emit is a fixed point
// of Parse. rapid prints the seed and the drawn values on failure; replay
// with -rapid.seed.
func TestEmitParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc := genDocument(t)
		text := yamlsubset.Emit(doc)
		back, err := yamlsubset.Parse(text)
		if err != nil {
			t.Fatalf("Parse(Emit(doc)): %v\n%s", err, text)
		}
		if !value.Equal(doc, back) {
			t.Fatalf("Parse(Emit(doc)) differs:\n doc  %s\n back %s", pyjson.Encode(doc), pyjson.Encode(back))
		}
		if again := yamlsubset.Emit(back); !bytes.Equal(again, text) {
			t.Fatalf("Emit not a fixed point:\n%s\n---\n%s", text, again)
		}
		var streamed bytes.Buffer
		if err := yamlsubset.EmitTo(&streamed, doc); err != nil || !bytes.Equal(streamed.Bytes(), text) {
			t.Fatalf("EmitTo differs from Emit (%v):\n%s\n---\n%s", err, text, streamed.Bytes())
		}
	})
}

// TestEmittedFilesReadByOtherYAML: sigs.k8s.io/yaml (a YAML 1.1 reader)
// reads every emitted file to the same value. That reader turns numbers into
// float64, so integers beyond 2^53 are compared after rounding to float64
// and floats are compared numerically (-0.0 equals 0.0 there).
//
// Known reader defect, decided and documented: that reader (go-yaml v2)
// sometimes refuses a document holding a raw U+FEFF inside a quoted scalar,
// depending on where it sits (seen: "did not find expected key"). The
// contract keeps U+FEFF raw (it is not in the D6 list, and the recorded
// files hold it raw), so the writer keeps it raw and this cross-check
// replaces U+FEFF before emitting. Our own reader handles it (round-trip
// property above and the fixture fixed points).
func TestEmittedFilesReadByOtherYAML(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc := withoutBOM(genDocument(t)).(*value.Map)
		text := yamlsubset.Emit(doc)
		js, err := yaml.YAMLToJSON(text)
		if err != nil {
			t.Fatalf("sigs.k8s.io/yaml refuses the file: %v\n%s\nexact bytes: %q", err, text, text)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var other any
		if err := dec.Decode(&other); err != nil {
			t.Fatal(err)
		}
		if doc.Len() == 0 {
			return // an empty document emits as "" which YAML reads as null
		}
		if path, ok := sameAsYAML(doc, other, "$"); !ok {
			t.Fatalf("YAML reader disagrees at %s\nfile:\n%s\nreader: %s", path, text, js)
		}
	})
}

// sameAsYAML compares our value with what encoding/json made of the YAML
// reader's JSON; it returns the first differing path.
func sameAsYAML(ours value.Value, theirs any, path string) (string, bool) {
	switch o := ours.(type) {
	case nil:
		return path, theirs == nil
	case bool:
		b, ok := theirs.(bool)
		return path, ok && b == o
	case string:
		s, ok := theirs.(string)
		return path, ok && s == o
	case *big.Int:
		n, ok := theirs.(json.Number)
		if !ok {
			return path, false
		}
		if o.IsInt64() && math.Abs(float64(o.Int64())) <= 1<<53 {
			return path, string(n) == o.String()
		}
		want, _ := new(big.Float).SetInt(o).Float64()
		got, err := strconv.ParseFloat(string(n), 64)
		return path, err == nil && got == want
	case float64:
		n, ok := theirs.(json.Number)
		if !ok {
			return path, false
		}
		got, err := strconv.ParseFloat(string(n), 64)
		return path, err == nil && got == o
	case []value.Value:
		l, ok := theirs.([]any)
		if !ok || len(l) != len(o) {
			return path, false
		}
		for i := range o {
			if p, ok := sameAsYAML(o[i], l[i], path+"["+strconv.Itoa(i)+"]"); !ok {
				return p, false
			}
		}
		return path, true
	case *value.Map:
		m, ok := theirs.(map[string]any)
		if !ok || len(m) != o.Len() {
			return path, false
		}
		for _, k := range o.Keys() {
			v, _ := o.Get(k)
			tv, ok := m[k]
			if !ok {
				return path + "." + strconv.Quote(k) + " (missing)", false
			}
			if p, ok := sameAsYAML(v, tv, path+"."+strconv.Quote(k)); !ok {
				return p, false
			}
		}
		return path, true
	}
	return path, false
}

// withoutBOM returns a copy of v with every U+FEFF in keys and strings
// replaced by U+FFFD (see TestEmittedFilesReadByOtherYAML).
func withoutBOM(v value.Value) value.Value {
	switch t := v.(type) {
	case string:
		return strings.ReplaceAll(t, "\ufeff", "\ufffd")
	case []value.Value:
		out := make([]value.Value, len(t))
		for i, x := range t {
			out[i] = withoutBOM(x)
		}
		return out
	case *value.Map:
		out := value.NewMap()
		for _, k := range t.Keys() {
			x, _ := t.Get(k)
			out.Set(strings.ReplaceAll(k, "\ufeff", "\ufffd"), withoutBOM(x))
		}
		return out
	}
	return v
}
