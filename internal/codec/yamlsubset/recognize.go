package yamlsubset

import (
	"io"
	"slices"
	"strings"
	"unsafe"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// The pieces of the recognizer of the engine's own form that ReadJSON's
// transcoder and the canonical scan of SplitItems and ScanItems share:
// the stack of open blocks with each block's key order, the engine's load
// rules, the usual key and the word-at-a-time reads of their one loop over
// a block's lines (runLines). What a scanner does with a line it took
// (JSON out, an items entry cut off or kept) and which values it takes as
// they are stay its own: its sink.

// LoadRules are what the engine's load does to a document's keys, as
// data the fast paths are given: they take only a file the load would
// take unchanged, and decline the rest to the general path, which then
// applies the rules itself.
type LoadRules struct {
	// Required are the top-level keys the load refuses a document
	// without, or adds when absent: a file lacking one is declined.
	Required []string
	// Maps are top-level keys the load takes only as maps: a file
	// giving one anything but a block or "{}" is declined.
	Maps []string
	// Rewritten are keys the load may rename or drop: a file with one
	// anywhere is declined.
	Rewritten []string
}

// ruleSet is LoadRules as the scanners consult them line by line.
type ruleSet struct {
	required, maps, rewritten []string
	// rewrittenLen[len(k)%64] says a key of k's length may be one of
	// rewritten: the check of almost every key is one load.
	rewrittenLen [64]bool
	seen         uint64 // a bit for each of required the document has
}

// maxRequired bounds LoadRules.Required (a bit each in ruleSet.seen).
const maxRequired = 64

// compile makes the rules ready for one scan. It reports false for
// rules the scanners cannot apply (too many required keys): the caller
// then declines every file.
func (r LoadRules) compile() (ruleSet, bool) {
	s := ruleSet{required: r.Required, maps: r.Maps, rewritten: r.Rewritten}
	for _, k := range r.Rewritten {
		s.rewrittenLen[len(k)%64] = true
	}
	return s, len(r.Required) <= maxRequired
}

// rewrites reports whether the load may rename or drop key.
func (s *ruleSet) rewrites(key string) bool {
	return s.rewrittenLen[len(key)%64] && slices.Contains(s.rewritten, key)
}

// top takes a top-level entry of key: a block (opens) or the value v.
func (s *ruleSet) top(key string, opens bool, v string) bool {
	if i := slices.Index(s.required, key); i >= 0 {
		s.seen |= 1 << i
	}
	return opens || v == "{}" || !slices.Contains(s.maps, key)
}

// complete reports whether every required key was seen.
func (s *ruleSet) complete() bool {
	return s.seen == 1<<len(s.required)-1
}

// blocks are the open blocks of the document being scanned, from the
// top level down: open[d] is the block at depth d.
type blocks struct {
	open []openBlock
	// opening: the last line was `key:`, whose entries must follow one
	// level deeper.
	opening bool
}

// openBlock is one open block: its level, its last key so far (the next
// must sort after it: §15.1.6 order, so no key repeats) and whether it
// has one. lastKey may be a view of the scanner's window until detach
// copies it.
type openBlock struct {
	level    level
	lastRank int
	lastKey  string
	any      bool
}

// enter places a line at depth: the first line opens the top level, a
// line after `key:` must be that block's first entry, any other line
// closes the blocks below its own. It returns how many blocks the line
// closed, and false for a line at a depth the form has no place for (an
// empty `key:` block, a stray deeper line).
func (b *blocks) enter(depth int) (closed int, ok bool) {
	cur := len(b.open) - 1
	switch {
	case cur < 0:
		if depth != 0 {
			return 0, false
		}
		b.open = append(b.open, openBlock{level: levelTop})
		return 0, true
	case b.opening:
		if depth != cur {
			return 0, false
		}
		b.opening = false
		return 0, true
	case depth > cur:
		return 0, false
	}
	b.open = b.open[:depth+1]
	return cur - depth, true
}

// take records key as the next entry of the block at depth, which
// enter placed, and returns the block and whether it had an entry
// before; false when key does not sort after that entry's.
func (b *blocks) take(depth int, key string) (blk *openBlock, had, ok bool) {
	blk = &b.open[depth]
	r := rank(blk.level, key)
	if blk.any && !sortsAfter(key, r, blk.lastKey, blk.lastRank) {
		return blk, true, false
	}
	had = blk.any
	blk.lastRank, blk.lastKey, blk.any = r, key, true
	return blk, had, true
}

// sortsAfter reports whether key, of rank r, may follow the key last of
// rank lastRank in one block: the §15.1.6 order, strict, so no key
// repeats. Every scanner checks a block's keys with it.
func sortsAfter(key string, r int, last string, lastRank int) bool {
	return lastRank < r || lastRank == r && last < key
}

// push opens the block of the entry key of blk, whose entries follow.
func (b *blocks) push(blk *openBlock, key string) {
	b.open = append(b.open, openBlock{level: childLevel(blk.level, key)})
	b.opening = true
}

// detach copies the keys the blocks keep out of the window, which the
// next read overwrites.
func (b *blocks) detach() {
	for i := range b.open {
		b.open[i].lastKey = strings.Clone(b.open[i].lastKey)
	}
}

// usualLine is a line readUsualLine read: its indent (in spaces), its
// key, whether the key is quoted, the entry (the line from its key to its
// end, without the "\n"), the text after the key's colon, and whether that
// is " " and a string of raw printable ASCII (raw).
type usualLine struct {
	indent       int
	key          string
	quoted, raw  bool
	entry, after string
}

// readUsualLine reads the line at offset p of t (which ends in "\n") when
// its key is in usualKey's forms, in one pass: a raw string's scan finds
// the line's end. next is the offset of the line after it. ok is false
// for any other line, which goes to the scanner's line reader.
func readUsualLine(t string, p int) (l usualLine, next int, ok bool) {
	n := p
	for t[n] == ' ' {
		n++
	}
	key, k, quoted, ok := usualKey(t, n)
	if !ok {
		return usualLine{}, 0, false
	}
	end, raw := k+1, false // end: the line's "\n"
	if t[end] != '\n' {
		if t[k+1] == ' ' && t[k+2] == '"' {
			if j := pyjson.SkipRawASCII(t, k+3); t[j] == '"' && t[j+1] == '\n' {
				end, raw = j+1, true
			}
		}
		if !raw {
			end = k + 1 + strings.IndexByte(t[k+1:], '\n')
		}
	}
	return usualLine{indent: n - p, key: key, quoted: quoted, raw: raw, entry: t[n:end], after: t[k+1 : end]}, end + 1, true
}

// usualKey reads the key that starts at t[n] in the forms both scanners
// take in one pass (next): a bare word, or a quoted string of raw
// printable ASCII, followed at once by the colon, which is at t[colon].
// ok is false for any other line, which goes to the line reader. t must
// end in "\n" after t[n].
func usualKey(t string, n int) (key string, colon int, quoted, ok bool) {
	switch k := n + 1; {
	case bareStart[t[n]]:
		for bareRest[t[k]] {
			k++
		}
		return t[n:k], k, false, t[k] == ':'
	case t[n] == '"':
		j := pyjson.SkipRawASCII(t, k)
		return t[k:j], j + 1, true, t[j] == '"' && t[j+1] == ':'
	}
	return "", 0, false, false
}

// bareStart and bareRest are the bytes isBareWord takes first and after.
var bareStart, bareRest = func() (start, rest [256]bool) {
	for c := range 256 {
		b := byte(c)
		start[c] = b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b == '_'
		rest[c] = start[c] || b >= '0' && b <= '9' || b == '.' || b == '-'
	}
	return start, rest
}()

// spaces8 is eight spaces read as one word by load64.
const spaces8 = 0x2020202020202020

// load64 reads the eight bytes of s from i as one little-endian word.
func load64(s string, i int) uint64 {
	b := s[i : i+8] // constant indexes below: one load
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// maxShape bounds the lines of a block that runLines's shape (shapeKey,
// scanShape) follows.
const maxShape = 16

// shapeKey is a key runLines has read in a block, to be expected at the
// same place in the block's next sibling (the entries of the engine's
// items have the same keys in the same order, item after item): the key
// and its colon as the low bytes of a word, with the mask that keeps them
// (a key of at most 7 bytes), its length and its rank. A line whose first
// bytes match it has that key, a bare key taken before, which passed the
// checks there (the pattern, the load rules, the order against the key
// before it, which had the key the shape holds before it too).
type shapeKey struct {
	word, mask uint64
	n, rank    int
}

// foretells reports whether the key at offset q of w, which has eight
// bytes from q on, is the shape's.
func (s *shapeKey) foretells(w string, q int) bool {
	return load64(w, q)&s.mask == s.word
}

// shapeOf is the shape of the bare key of n bytes (below 8) at offset q
// of w, which has eight bytes from q on, and of rank r.
func shapeOf(w string, q, n, r int) shapeKey {
	m := uint64(1)<<(8*(n+1)) - 1 // the key and its colon
	return shapeKey{word: load64(w, q) & m, mask: m, n: n, rank: r}
}

// lineReader reads a text of at most limit bytes through a buffer filled
// by large reads, for the scanners that never hold the text whole: the
// buffer's whole lines are the window a scanner reads, a view of the
// buffer that the next fill overwrites.
type lineReader struct {
	r     io.Reader
	buf   []byte
	have  int // the bytes read into buf
	read  int64
	limit int64
	eof   bool
}

func newLineReader(r io.Reader, limit int64, size int) *lineReader {
	return &lineReader{r: io.LimitReader(r, limit+1), buf: make([]byte, max(size, 1)), limit: limit}
}

// window is the buffer up to the end of its last complete line.
func (l *lineReader) window() string {
	w := unsafe.String(unsafe.SliceData(l.buf), l.have)
	return w[:strings.LastIndexByte(w, '\n')+1]
}

// fill keeps the bytes from offset from on (a partial line, and what the
// scanner still needs of the lines before it) at the start of the
// buffer, doubling it when they fill half of it, and reads more after
// them. It is false on a read error or past the limit; eof then says the
// text ended.
func (l *lineReader) fill(from int) bool {
	l.have = copy(l.buf, l.buf[from:l.have])
	if l.have >= len(l.buf)/2 {
		l.buf = append(l.buf, make([]byte, len(l.buf))...)
	}
	n, err := io.ReadFull(l.r, l.buf[l.have:])
	l.have += n
	l.read += int64(n)
	switch {
	case l.read > l.limit:
		return false
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		l.eof = true
	case err != nil:
		return false
	}
	return true
}
