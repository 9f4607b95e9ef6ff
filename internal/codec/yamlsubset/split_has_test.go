package yamlsubset_test

import (
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
)

// TestSplitHas: Has finds exactly the entries split off, asked in key
// order (from the last one found), out of it, again, and on no split.
// Broken on purpose: the next entry taken without comparing its key
// answers "b1" (not split off) true; no search when the next entry is not
// the key misses "d" after "a".
func TestSplitHas(t *testing.T) {
	var b strings.Builder
	b.WriteString("schema_version: 1\nsources: {}\nitems:\n")
	for _, k := range []string{"a", "b", "b1", "c", "d"} {
		b.WriteString("  " + k + ":\n    source: \"s\"\n")
	}
	_, others, ok := yamlsubset.SplitItems(b.String(), engineRules, func(key, _ string) bool { return key == "b1" })
	if !ok || others.Len() != 4 {
		t.Fatalf("split: ok %v, %d split off", ok, others.Len())
	}
	for _, k := range []string{"a", "b", "b1", "c", "d", "e", "a", "d", "c", "c", "", "b1", "b"} {
		if got, want := others.Has(k), k == "a" || k == "b" || k == "c" || k == "d"; got != want {
			t.Errorf("Has(%q) = %v, want %v", k, got, want)
		}
	}
	var none *yamlsubset.Split
	if none.Has("a") {
		t.Error("no split: Has(\"a\") = true")
	}
}
