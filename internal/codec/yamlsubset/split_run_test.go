package yamlsubset_test

import (
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
)

// TestSplitItemsKeysAfterARun: the key line that closes a block of usual
// lines and opens its sibling (an items entry, or a map inside one) is
// taken in Emit's spellings only: bare, or quoted when it is not a bare
// key; a quoted bare key, a YAML 1.1 word bare as an items entry's key,
// a key out of order and a sibling right after an empty `key:` there are
// declined, by SplitItems and by ScanItems with small buffers (the run of
// lines across a refill) alike, and ScanItems's reduced text is
// SplitItems's less what it keeps for the reference writer's forms.
func TestSplitItemsKeysAfterARun(t *testing.T) {
	const head = "schema_version: 1\nsources: {}\nitems:\n  a:\n    source: \"s\"\n    status: \"x\"\n    m:\n      x: 1\n      z: \"z\"\n"
	cases := []struct {
		tail string
		ok   bool
	}{
		{"    p:\n      z: 1\n  b:\n    source: \"s\"\n", true},
		{"    \"p 1\":\n      z: 1\n  \"b:1\":\n    source: \"s\"\n", true},
		{"    p:\n      z: 1\n  \"b\":\n    source: \"s\"\n", false}, // a quoted bare key, an entry of items
		{"    p: 1\n  \"b\":\n    source: \"s\"\n", false},
		{"    p: 1\n  yes:\n    source: \"s\"\n", false},
		{"    p: 1\n  a:\n    source: \"s\"\n", false},
		{"    p: 1\n  \"b:1\":\n    source: \"s\"\n", true},
		{"    p: 1\n  \"b\\u00e9\":\n    source: \"s\"\n", false},        // an escape Emit does not write
		{"    \"p\":\n      z: 1\n  b:\n    source: \"s\"\n", false},     // a quoted bare key, in an item
		{"    p:\n      z: 1\n  yes:\n    source: \"s\"\n", false},       // a YAML 1.1 word, an entry of items
		{"    l:\n      z: 1\n  b:\n    source: \"s\"\n", false},         // out of order in the item
		{"    p:\n      z: 1\n  a:\n    source: \"s\"\n", false},         // a repeated entry
		{"    p:\n    q:\n      z: 1\n  b:\n    source: \"s\"\n", false}, // an empty block, then its sibling
		{"    p:\n  b:\n    source: \"s\"\n", false},                     // an empty block, then an entry
		// Blocks a line closes, or opens, in a run.
		{"    p:\n      q:\n        r: 1\n      s: 1\n    t: 1\n  b:\n    source: \"s\"\n", true},
		{"    p:\n      q:\n        r: 1\n    t: 1\n  b: 1\n  c:\n    source: \"s\"\n", true},
		{"    p:\n      q:\n        r: 1\n    l: 1\n", false},  // out of order after the blocks it closes
		{"    p:\n      q:\n        r: 1\n    p: 1\n", false},  // repeated after them
		{"    p:\n      q:\n    t: 1\n", false},                // an empty block, then a line further up
		{"    p:\n      q:\n        r: 1\n     t: 1\n", false}, // an odd indent further up
		{"    p:\n      q:\n        r: 1\n   t: 1\n", false},   // an odd indent further up
		{"    p:\n      q:\n        r: 1\n     t:\n    source: \"s\"\n", false},
		{deep(62) + "  b: 1\n", true},                          // a `key:` 62 levels down, then a line below it
		{deep(63), false},                                      // one 63 levels down: deeper than the fast path takes
		{"    p:\n      q:\n        r: 1\n    t:  1\n", false}, // not Emit's spacing, further up
		{"    p:\n      q:\n        r: 1\n    verified_merge_sha: 1\n", false},
		{"    p:\n      q: 1\n      q:\n        r: 1\n", false}, // a repeated key opening a block
		{"    p:\n      yes:\n        r: 1\n", true},            // the reference writer's key, tolerated (the entry kept)
		{"    p:\n      verified_merge_sha:\n        r: 1\n", false},
	}
	none := func(string, string) bool { return false }
	for _, tc := range cases {
		text := head + tc.tail
		want, others, ok := yamlsubset.SplitItems(text, engineRules, none)
		if ok != tc.ok {
			t.Errorf("SplitItems(%q) ok = %v, want %v", tc.tail, ok, tc.ok)
		}
		// Each entry of items is split off, unless it holds a line in the
		// reference writer's form.
		entries := strings.Count(text, "\n  ") - strings.Count(text, "\n   ")
		if odd := strings.Contains(tc.tail, "yes:"); ok && others.Len() != entries && !odd || ok && odd && others.Len() != entries-1 {
			t.Errorf("SplitItems(%q): %d entries split off, of %d", tc.tail, others.Len(), entries)
		}
		// ScanItems leaves out the entry SplitItems keeps for its line in
		// the reference writer's form (lessUnwanted).
		want = lessUnwanted(t, want, none)
		for _, size := range []int{1, 7, 64, 1 << 10} {
			old := yamlsubset.SetScanBuffer(size)
			got, gotOK := yamlsubset.ScanItems(strings.NewReader(text), 1<<20, engineRules, none)
			yamlsubset.SetScanBuffer(old)
			if gotOK != ok || got != want {
				t.Errorf("ScanItems(%q), buffer %d: %q, %v; SplitItems: %q, %v", tc.tail, size, got, gotOK, want, ok)
			}
		}
	}
}

// deep is the lines of a map in the item, one `key:` a level from depth
// 2 to depth n, with a line below the last.
func deep(n int) string {
	s := ""
	for d := 2; d <= n; d++ {
		s += strings.Repeat("  ", d) + "p:\n"
	}
	return s + strings.Repeat("  ", n+1) + "q: 1\n"
}

// TestSplitItemsShapeOfTheItemBefore: a line whose first bytes are the
// key the item before had at the same place is taken for that key only
// when it is (its colon included), and only when the keys before it were
// that item's too: a key out of order after an item with fewer, other or
// longer keys is declined; a line taken whole because the items before
// had it there is that line to its end, a value Emit does not write
// beside it is declined, and a line in the reference writer's form keeps
// its entry whenever it comes. Each case's items follow an item the scan reads
// before it takes the shape of any.
func TestSplitItemsShapeOfTheItemBefore(t *testing.T) {
	long := "a: \"" + strings.Repeat("x", 60) + "\""
	item := func(key string, lines ...string) string {
		s := "  " + key + ":\n"
		for _, l := range lines {
			s += "    " + l + "\n"
		}
		return s
	}
	cases := []struct {
		name  string
		items string
		ok    bool
	}{
		{"the same keys", item("a", "a: 1", "c: 1", "d: 1") + item("b", "a: 1", "c: 1", "d: 1") + item("c", "a: 1", "c: 1", "d: 1"), true},
		{"another key, then the first item's next", item("a", "a: 1", "c: 1", "d: 1") + item("b", "a: 1", "e: 1") + item("c", "a: 1", "e: 1", "d: 1"), false},
		{"fewer keys, then more", item("a", "a: 1", "e: 1") + item("b", "a: 1") + item("c", "a: 1", "e: 1", "d: 1"), false},
		{"a longer key", item("a", "a: 1", "c: 1") + item("b", "a: 1", "cc: 1") + item("c", "a: 1", "cc: 1", "c: 1"), false},
		{"a key and more of it", item("a", "a: 1", "ab: 1") + item("b", "a: 1", "abc: 1") + item("c", "a: 1", "ab: 1"), true},
		{"a key, then not its colon", item("a", "a: 1", "ab: 1") + item("b", "a: 1", "ab; 1"), false},
		{"a repeated key", item("a", "a: 1", "c: 1") + item("b", "a: 1", "c: 1", "c: 2"), false},
		{"a deeper line", item("a", "a: 1", "c: 1") + item("b", "a: 1", "  c: 1"), false},
		{"an eight-byte key", item("a", "abcdefgh: 1", "b: 1") + item("b", "abcdefgh: 1", "b: 1") + item("c", "abcdefgh: 1", "a: 1"), false},
		{"an eight-byte key, then not its colon", item("a", "abcdefgh: 1") + item("b", "abcdefgh: 1") + item("c", "abcdefgh; 1"), false},
		// The whole line of the second item with the key at that place,
		// kept (scanShape's line) and compared in the items after it.
		{"the same line, then one that begins with it", item("a", "a: 1", "c: 1") + item("b", "a: 1", "c: 1") + item("c", "a: 12", "c: 1") + item("d", "a: 1", "c: 1"), true},
		{"the same line, then a value Emit does not write", item("a", "a: 1", "c: 1") + item("b", "a: 1", "c: 1") + item("c", "a: 01", "c: 1"), false},
		{"the same line, then its key again", item("a", "a: 1", "c: 1") + item("b", "a: 1", "c: 1") + item("c", "a: 1", "a: 2"), false},
		{"the same line after a line that varied", item("a", "a: 1", "c: 1") + item("b", "a: 1", "c: 1") + item("c", "a: 2", "c: 1") + item("d", "a: 1", "c: 01"), false},
		{"a line longer than the shape keeps, thrice", item("a", long, "c: 1") + item("b", long, "c: 1") + item("c", long, "c: 1"), true},
		{"the reference writer's nan, twice after a number", item("a", "a: 1", "r: 1.5") + item("b", "a: 1", "r: nan") + item("c", "a: 1", "r: nan") + item("d", "a: 1", "r: 1.5"), true},
	}
	none := func(string, string) bool { return false }
	for _, tc := range cases {
		// The first item: the run reads its lines, but takes a shape
		// only from the items after it (the run opens those); the last:
		// a line is taken by its shape only with eight bytes after its
		// key's first.
		text := "schema_version: 1\nsources: {}\nitems:\n" + item("_", "a: 1") + tc.items + item("zz", "a: 1")
		want, others, ok := yamlsubset.SplitItems(text, engineRules, none)
		if ok != tc.ok {
			t.Errorf("%s: SplitItems ok = %v, want %v", tc.name, ok, tc.ok)
		}
		// Every entry is split off but those in the reference writer's
		// forms, which ScanItems leaves out too (lessUnwanted).
		entries, odd := strings.Count(text, "\n  ")-strings.Count(text, "\n   "), strings.Count(text, ": nan\n")
		if ok && others.Len() != entries-odd {
			t.Errorf("%s: SplitItems split off %d entries of %d, %d of them in the reference forms", tc.name, others.Len(), entries, odd)
		}
		want = lessUnwanted(t, want, none)
		for _, size := range []int{1, 16, 1 << 10} {
			old := yamlsubset.SetScanBuffer(size)
			got, gotOK := yamlsubset.ScanItems(strings.NewReader(text), 1<<20, engineRules, none)
			yamlsubset.SetScanBuffer(old)
			if gotOK != ok || got != want {
				t.Errorf("%s: ScanItems, buffer %d: %q, %v; SplitItems: %q, %v", tc.name, size, got, gotOK, want, ok)
			}
		}
	}
}
