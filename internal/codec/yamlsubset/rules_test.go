package yamlsubset_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
)

// TestLoadRulesAreData: the fast paths apply the load rules they are
// given, not rules of their own. Each text below breaks one of the
// engine's rules (a required key missing, a map key given a scalar, the
// legacy evidence key in an item): with the engine's rules ReadJSON,
// SplitItems and ScanItems decline it, with the same rules less the one it
// breaks they take it, ReadJSON's text being Parse's document as JSON.
// A text breaking none is taken by both.
func TestLoadRulesAreData(t *testing.T) {
	const head = "schema_version: 1\nsources: {}\n"
	const item = "items:\n  a:\n    status: \"open\"\n"
	without := func(list []string, key string) []string {
		var out []string
		for _, k := range list {
			if k != key {
				out = append(out, k)
			}
		}
		return out
	}
	r := engineRules
	cases := []struct {
		name  string
		text  string
		rules yamlsubset.LoadRules // the engine's less the rule the text breaks
	}{
		{"none broken", head + item, r},
		{"no sources", "schema_version: 1\n" + item,
			yamlsubset.LoadRules{Required: without(r.Required, "sources"), Maps: r.Maps, Rewritten: r.Rewritten}},
		{"sources not a map", "schema_version: 1\nsources: 1\n" + item,
			yamlsubset.LoadRules{Required: r.Required, Maps: without(r.Maps, "sources"), Rewritten: r.Rewritten}},
		{"legacy evidence", head + item + "    verified_merge_sha: \"abc\"\n",
			yamlsubset.LoadRules{Required: r.Required, Maps: r.Maps, Rewritten: without(r.Rewritten, "verified_merge_sha")}},
	}
	none := func(string, string) bool { return false }
	for _, tc := range cases {
		breaks := tc.name != "none broken"
		for _, rules := range []struct {
			name string
			r    yamlsubset.LoadRules
			take bool
		}{{"engine's", r, !breaks}, {"given", tc.rules, true}} {
			text := []byte(tc.text)
			out, ok := yamlsubset.ReadJSON(bytes.NewReader(text), int64(len(text)), int64(len(text)), rules.r)
			if ok != rules.take {
				t.Errorf("%s, %s rules: ReadJSON ok %v, want %v", tc.name, rules.name, ok, rules.take)
			} else if ok {
				doc, err := yamlsubset.Parse(text)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if got, want := textBytes(t, out), pyjson.Encode(doc); !bytes.Equal(got, want) {
					t.Errorf("%s, %s rules: ReadJSON %s, want %s", tc.name, rules.name, got, want)
				}
			}
			if _, _, ok := yamlsubset.SplitItems(tc.text, rules.r, none); ok != rules.take {
				t.Errorf("%s, %s rules: SplitItems ok %v, want %v", tc.name, rules.name, ok, rules.take)
			}
			if _, ok := yamlsubset.ScanItems(strings.NewReader(tc.text), int64(len(text)), rules.r, none); ok != rules.take {
				t.Errorf("%s, %s rules: ScanItems ok %v, want %v", tc.name, rules.name, ok, rules.take)
			}
		}
	}
}
