package yamlsubset_test

import (
	"math"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// TestNonFiniteInLists pins the reading of the reference writer's inline
// JSON: NaN, Infinity and -Infinity inside a list are floats, at any depth
// below the list, and a write puts them back as the reference wrote them.
func TestNonFiniteInLists(t *testing.T) {
	in := "k:\n  samples: [NaN, -Infinity, 2.5]\n  nested: [{\"v\": Infinity}, [NaN]]\n"
	doc, err := yamlsubset.Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := doc.Get("k")
	samples, _ := k.(*value.Map).Get("samples")
	list, ok := samples.([]value.Value)
	if !ok || len(list) != 3 {
		t.Fatalf("samples = %#v", samples)
	}
	if f, ok := list[0].(float64); !ok || !math.IsNaN(f) {
		t.Errorf("samples[0] = %#v, want NaN", list[0])
	}
	if f, ok := list[1].(float64); !ok || !math.IsInf(f, -1) {
		t.Errorf("samples[1] = %#v, want -Inf", list[1])
	}
	nested, _ := k.(*value.Map).Get("nested")
	inner, _ := nested.([]value.Value)[0].(*value.Map).Get("v")
	if f, ok := inner.(float64); !ok || !math.IsInf(f, 1) {
		t.Errorf("nested v = %#v, want +Inf", inner)
	}
	// The writer sorts an item's other keys: nested before samples.
	want := "k:\n  nested: [{\"v\": Infinity}, [NaN]]\n  samples: [NaN, -Infinity, 2.5]\n"
	if got := string(yamlsubset.Emit(doc)); got != want {
		t.Errorf("Emit = %q, want %q", got, want)
	}
}

// TestNonFiniteOutsideLists: the reference writer never puts NaN or the
// infinities anywhere but inside a list, so a block value or an inline
// object holding one is a hand edit and refused (see TestParseRefuses); a
// non-finite float that reached a block anyway is written as the
// reference's repr, which every reading takes for the string.
func TestNonFiniteOutsideLists(t *testing.T) {
	doc := value.NewMap()
	doc.Set("a", math.NaN())
	doc.Set("b", math.Inf(1))
	doc.Set("c", math.Inf(-1))
	got := string(yamlsubset.Emit(doc))
	if want := "a: nan\nb: inf\nc: -inf\n"; got != want {
		t.Fatalf("Emit = %q, want %q", got, want)
	}
	back, err := yamlsubset.Parse([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range map[string]string{"a": "nan", "b": "inf", "c": "-inf"} {
		if v, _ := back.Get(k); v != w {
			t.Errorf("%s read back as %#v, want %q", k, v, w)
		}
	}
}

// TestYAML11WordKeysRewritten: a bare YAML 1.1 word key the reference wrote
// reads as that string and is quoted on the next write (D8).
func TestYAML11WordKeysRewritten(t *testing.T) {
	doc, err := yamlsubset.Parse([]byte("items:\n  \"c:1\":\n    y: 2\n    No: 1\n    meta:\n      OFF: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "items:\n  \"c:1\":\n    \"No\": 1\n    meta:\n      \"OFF\": 0\n    \"y\": 2\n"
	if got := string(yamlsubset.Emit(doc)); got != want {
		t.Errorf("Emit = %q, want %q", got, want)
	}
}
