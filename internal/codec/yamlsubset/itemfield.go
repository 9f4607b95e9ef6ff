package yamlsubset

import "strings"

// ItemField finds the item's own key name in block, an items entry as
// SplitItems and ScanItems hand it to keep (its key line, then the
// item's own keys' lines at four spaces, each followed by the lines below
// it, deeper, every line with its "\n"), and returns the text after its
// colon without the "\n": the value, or "" when a block below holds it.
//
// name must be one of the keys Emit puts first in an item, in its item
// order (source, status, sensitive, ...). The entry's keys come in that
// order, so the search reads only the lines up to the place of name.
// Emit writes those keys bare, so a line's key ranks as the text before
// its first colon: a quoted key, or one in the reference writer's own
// form (a YAML 1.1 word bare), is none of them and ranks after them all.
func ItemField(block, name string) (after string, found bool) {
	want := itemRank(name)
	rest := block[strings.IndexByte(block, '\n')+1:] // after the key line
	for {
		s, own := strings.CutPrefix(rest, "    ")
		if !own || s == "" || s[0] == '\n' {
			return "", false // the entry ends
		}
		if s[0] != ' ' {
			// The key: up to the line's first colon. Emit writes the
			// names bare, so a key spelled otherwise (or a line without
			// a colon, the text up to the next one) ranks after them.
			colon := strings.IndexByte(s, ':')
			if colon == -1 {
				return "", false
			}
			switch r := itemRank(s[:colon]); {
			case r > want:
				return "", false // a key Emit writes after name
			case r == want:
				after, _, _ = strings.Cut(s[colon+1:], "\n")
				return after, true
			}
		}
		// The next line: this key's below it, or the next key's.
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			return "", false
		}
		rest = s[nl+1:]
	}
}
