package yamlsubset_test

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// TestScanItemsIsSplitItems: the streamed scan declines exactly the texts
// SplitItems declines and otherwise returns its reduced text less the
// entries in the reference writer's forms that keep does not want (which
// SplitItems keeps, for the write; lessUnwanted), so SplitItems's very
// text where the text has none, for buffers from one byte (every line and
// entry across a refill) to the default, readers that return a few bytes
// at a time, and each kind of keep: none, one entry, the closed ones, all.
func TestScanItemsIsSplitItems(t *testing.T) {
	doc := benchDocument(40)
	items, _ := doc.Get("items")
	for i, k := range []int{0, 7, 39} { // closed items, the first and last among them
		_, v := items.(*value.Map).At(k)
		v.(*value.Map).Set("status", "closed")
		if i == 1 {
			v.(*value.Map).Set("body", strings.Repeat("x", 3000)) // an entry longer than small buffers
		}
	}
	base := string(yamlsubset.Emit(doc))
	// The reference writer's forms (referenceBench): entries kept whatever
	// keep says, one of them closed and one long, across refills.
	python, _ := referenceBench()
	python = strings.Replace(python, "    N: 2\n", "    N: 2\n    No: \""+strings.Repeat("y", 3000)+"\"\n", 1)
	pythonClosed := strings.Replace(python, "    ratio: nan\n", "    ratio: nan\n    zz: inf\n", 1)
	pythonClosed = strings.Replace(pythonClosed, "status: \"analyzed\"\n    title: \"Export button fails for report 7\"", "status: \"closed\"\n    title: \"Export button fails for report 7\"", 1)
	if !strings.Contains(pythonClosed, "    status: \"closed\"\n") || !strings.Contains(pythonClosed, "    zz: inf\n") || !strings.Contains(python, "    No: \"yyy") {
		t.Fatal("the reference bench text lacks the edits")
	}
	texts := []string{
		base,
		strings.Replace(base, "  writer:", "  writer :", 1),                                // not canonical
		strings.Replace(base, "    status: \"closed\"", "    status: \"c\\u006cosed\"", 1), // an escape Emit does not write
		base[:len(base)-1], // no final newline
		"",
		"schema_version: 1\nsources: {}\nitems: {}\n",
		"schema_version: 1\nsources: {}\nitems:\n  a:\n    status: \"closed\"\nzz: 1\n",
		"schema_version: 1\nsources: {}\nitems:\n  a: 1\n  b: 2\nzz: 1\n",
		"schema_version: 1\nsources: {}\nitems:\n  a: 1\n",
		python,
		pythonClosed,
		strings.Replace(python, "    N: 2\n", "     N: 2\n", 1), // an odd indent: declined
		"schema_version: 1\nsources:\n  off:\n    cursor: \"1\"\nitems:\n  \"a:1\":\n    x: nan\n  \"a:2\":\n    x: 1\n",
		// Blank lines and comments (a hand edit): those in an entry keep
		// it in both; those after the items line go with it when no
		// entry is kept.
		"# top\n\n" + strings.Replace(base, "items:\n", "items:\n  # first\n\n", 1),
		strings.Replace(base, "    status: \"closed\"", "    # the status\n    status: \"closed\"", 1),
		"schema_version: 1\nsources: {}\nitems:\n# c\n  a:\n    x: 1\n  # between\n  b:\n    x: 2\n\t \n# end\n",
		"schema_version: 1\nsources: {}\nitems:\n  a:\n    x: 1\n  # in b\r\n  b:\n    x: 2\n", // a CR: declined
	}
	keeps := map[string]func(key, block string) bool{
		"none":   func(string, string) bool { return false },
		"one":    func(k, _ string) bool { return k == "slack-C003:1700000000.000003" || k == "b" || k == "a:2" },
		"closed": func(_, b string) bool { return strings.Contains(b, "\n    status: \"closed\"\n") },
		"all":    func(string, string) bool { return true },
	}
	for ti, text := range texts {
		for name, keep := range keeps {
			want, _, wantOK := yamlsubset.SplitItems(text, engineRules, keep)
			want = lessUnwanted(t, want, keep)
			for _, size := range []int{1, 7, 64, 1000, 256 << 10} {
				old := yamlsubset.SetScanBuffer(size)
				for ri, r := range []func() interface{ Read([]byte) (int, error) }{
					func() interface{ Read([]byte) (int, error) } { return strings.NewReader(text) },
					func() interface{ Read([]byte) (int, error) } { return iotest.HalfReader(strings.NewReader(text)) },
				} {
					got, ok := yamlsubset.ScanItems(r(), int64(len(text)), engineRules, keep)
					if ok != wantOK || got != want {
						t.Errorf("text %d, keep %s, buffer %d, reader %d: ok %v, %d bytes; SplitItems ok %v, %d bytes", ti, name, size, ri, ok, len(got), wantOK, len(want))
					}
				}
				yamlsubset.SetScanBuffer(old)
			}
		}
	}
	// More than the limit, and a failing reader, are declined.
	if _, ok := yamlsubset.ScanItems(strings.NewReader(base), int64(len(base))-1, engineRules, keeps["none"]); ok {
		t.Error("took a text longer than the limit")
	}
	if _, ok := yamlsubset.ScanItems(iotest.TimeoutReader(bytes.NewReader([]byte(base))), int64(len(base)), engineRules, keeps["none"]); ok {
		t.Error("took a text it could not read whole")
	}
	// The test compares something: the bench text and the small ones
	// are canonical, and SplitItems keeps entries of the reference texts
	// that ScanItems leaves out.
	for _, ti := range []int{0, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15} {
		if _, _, ok := yamlsubset.SplitItems(texts[ti], engineRules, keeps["none"]); !ok {
			t.Errorf("text %d is not canonical", ti)
		}
	}
	for _, ti := range []int{9, 10, 12} {
		if split, _, _ := yamlsubset.SplitItems(texts[ti], engineRules, keeps["none"]); lessUnwanted(t, split, keeps["none"]) == split {
			t.Errorf("text %d: SplitItems kept no entry that keep does not want", ti)
		}
	}
}

// lessUnwanted is reduced, a reduced text of SplitItems, without the
// entries of its items that keep does not want (the ones it kept because
// they hold a line in the reference writer's forms; not those with a blank
// line or a comment, which both keep), its items line "items: {}" when
// none is left, and then without the blank lines and comments after it:
// the reduced text of ScanItems.
func lessUnwanted(t *testing.T, reduced string, keep func(key, block string) bool) string {
	line := func(i int) int { return i + strings.IndexByte(reduced[i:], '\n') + 1 }
	at := strings.Index(reduced, "\nitems:\n")
	if at < 0 {
		return reduced // no text, or no entries
	}
	aside := func(i int) bool { // a blank line or a comment
		l := strings.TrimLeft(reduced[i:line(i)-1], " ")
		return l == "" || l[0] == '#' || strings.Trim(l, " \t") == ""
	}
	body := at + len("\nitems:\n")
	var b strings.Builder
	i := body
	for i < len(reduced) && aside(i) {
		i = line(i)
	}
	b.WriteString(reduced[:i])
	kept := false
	for i < len(reduced) && strings.HasPrefix(reduced[i:], "  ") && !aside(i) {
		j := line(i)
		hasAside := false
		for j < len(reduced) && (strings.HasPrefix(reduced[j:], "    ") || aside(j)) {
			hasAside = hasAside || aside(j)
			j = line(j)
		}
		block := reduced[i:j]
		key := block[2:]
		if key[0] == '"' {
			var err error
			if key, _, err = pyjson.DecodeStringPrefix(key); err != nil {
				t.Fatalf("entry %q: %v", block, err)
			}
		} else {
			key = key[:strings.IndexByte(key, ':')]
		}
		if hasAside || keep(key, block) {
			b.WriteString(block)
			kept = true
		}
		i = j
	}
	if !kept {
		b.Reset()
		b.WriteString(reduced[:body-1] + " {}\n")
	}
	b.WriteString(reduced[i:])
	return b.String()
}
