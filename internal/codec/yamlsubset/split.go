package yamlsubset

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// ItemBlock is one entry of the top-level items map of a canonical text:
// its key and where its lines (the key line and every line below it, each
// with its "\n", exactly as Emit writes that entry) are in the text.
type ItemBlock struct {
	Key        string
	Start, End int
}

// Split is the items entries SplitItems left out of the reduced text, in
// key order, with the text they are in.
type Split struct {
	text   string
	blocks []ItemBlock
	found  int // Has's last find, where its next search begins
}

// Len is the number of entries.
func (s *Split) Len() int {
	if s == nil {
		return 0
	}
	return len(s.blocks)
}

// Has reports whether key is one of the entries. Asked for keys in key
// order, it answers each from the entry after the last one it found.
func (s *Split) Has(key string) bool {
	if s == nil {
		return false
	}
	if i := s.found + 1; i < len(s.blocks) && s.blocks[i].Key == key {
		s.found = i
		return true
	}
	i, found := findBlock(s.blocks, key)
	if found {
		s.found = i
	}
	return found
}

// Blocks are the entries, in key order.
func (s *Split) Blocks() []ItemBlock { return s.blocks }

// SplitItems is the fast path of the commands that touch few items. It
// checks that text is canonical: the bytes Emit writes for the document
// Parse reads from it, after the engine's load rules, which rules holds
// (schema_version, sources and items present, sources and items maps, no
// key verified_merge_sha anywhere, so the legacy rename of §2.5 changes
// nothing), except for lines in the reference writer's own forms that
// Parse reads on their own as it reads Emit's (tolerate: a YAML 1.1 word
// as a bare key, a bare nan, inf or -inf, below the top level), and for
// blank lines and comments, which Parse leaves out (aside). Then it
// splits off the entries of items that keep does not want and that hold
// no such line, so each is exactly Emit's text for it: reduced is text
// without them (items: {} when none is kept), which Parse reads to the
// document minus those entries, and others are those entries in file
// order, which is Emit's order. A document decided from reduced and
// emitted, joined with others by JoinItemsTo, is the text Emit writes for
// the whole document decided the same way, as long as the decision
// neither reads nor changes the entries split off.
//
// ok is false when text is neither canonical nor so (or nests deeper than
// the fast path takes): the caller must parse it whole.
func SplitItems(text string, rules LoadRules, keep func(key, block string) bool) (reduced string, others *Split, ok bool) {
	rs, usable := rules.compile()
	if !usable {
		return "", nil, false
	}
	c := canonicalScan{text: text, keep: keep, lines: lines{rules: rs}, listOthers: true}
	c.others = make([]ItemBlock, 0, len(text)/512+8)
	if reduced, ok = c.split(); !ok || c.othersCount == 0 {
		return reduced, nil, ok
	}
	return reduced, &Split{text: text, blocks: c.others}, true
}

// SplitAllItems is SplitItems keeping every entry it may leave out, for a
// caller that walks the entries itself instead of taking them as a list
// (which costs a few dozen bytes an entry): reduced is SplitItems's, and
// entries walks every entry of items in file order, which is key order,
// each found as the walk reaches it. The walk includes the entries the
// reduced text keeps (those holding a line in the reference writer's
// forms, a blank line or a comment), whose text is not Emit's: the caller
// knows them by their keys, which the document parsed from reduced holds.
func SplitAllItems(text string, rules LoadRules) (reduced string, entries ItemEntries, ok bool) {
	rs, usable := rules.compile()
	if !usable {
		return "", ItemEntries{}, false
	}
	c := canonicalScan{text: text, keep: keepNoEntry, lines: lines{rules: rs}}
	if reduced, ok = c.split(); !ok {
		return "", ItemEntries{}, false
	}
	if c.firstEntry >= 0 {
		entries = ItemEntries{text: text, at: c.firstEntry, end: c.itemsEnd, keyAt: -1}
	}
	return reduced, entries, true
}

func keepNoEntry(string, string) bool { return false }

// ItemEntries walks the entries of the top-level items map of a text
// SplitAllItems took. It lists nothing: each entry's end is found by
// reading its lines when the walk takes it.
type ItemEntries struct {
	text string
	// at is the next entry's key line, end the line after the last entry.
	at, end int
	// key is the key read at offset keyAt (-1: none read).
	key   string
	keyAt int
}

// Key is the key of the next entry; ok is false after the last.
func (e *ItemEntries) Key() (key string, ok bool) {
	if e.at >= e.end {
		return "", false
	}
	if e.keyAt != e.at {
		// The line is "  " and the key as Emit writes it, then ':'
		// (SplitAllItems checked it).
		line := e.text[e.at+2 : e.at+strings.IndexByte(e.text[e.at:], '\n')]
		e.key, _, _ = entryKey(line)
		e.keyAt = e.at
	}
	return e.key, true
}

// At is the offset of the next entry's key line in the text (of the line
// after the last entry when none is left).
func (e *ItemEntries) At() int { return e.at }

// Next takes the next entry, which must exist (Key says so): its key and
// where its lines are in the text.
func (e *ItemEntries) Next() ItemBlock {
	key, _ := e.Key()
	start := e.at
	p := start + strings.IndexByte(e.text[start:e.end], '\n') + 1
	for !e.entryStarts(p) {
		p += strings.IndexByte(e.text[p:e.end], '\n') + 1
	}
	e.at = p
	return ItemBlock{Key: key, Start: start, End: p}
}

// NextIs takes the next entry if its text is block (an entry's text, its
// key line included), without reading its lines one by one.
func (e *ItemEntries) NextIs(block string) bool {
	after := e.at + len(block)
	if after > e.end || block == "" || e.text[e.at:after] != block || !e.entryStarts(after) {
		return false
	}
	e.at = after
	return true
}

// entryStarts reports whether the line at offset p, which starts a line
// of items (or is its end), starts an entry: in a text SplitAllItems took,
// every other line of an entry is indented further, or is a blank line or
// a comment, none of which has a key's first byte after two spaces.
func (e *ItemEntries) entryStarts(p int) bool {
	t := e.text
	return p >= e.end || t[p] == ' ' && t[p+1] == ' ' && (bareStart[t[p+2]] || t[p+2] == '"')
}

// split scans the text and builds the reduced text.
func (c *canonicalScan) split() (reduced string, ok bool) {
	text := c.text
	if !c.scan() {
		return "", false
	}
	if c.othersCount == 0 {
		return text, true
	}
	var b strings.Builder
	b.Grow(len(text) - c.othersLen + 16)
	if len(c.keptRanges) == 0 {
		// Nothing kept: the items line becomes "items: {}" (and the
		// blank lines or comments before its first entry go).
		b.WriteString(text[:c.itemsBody-1]) // up to the "\n" after "items:"
		b.WriteString(" {}\n")
	} else {
		b.WriteString(text[:c.firstEntry])
		for _, r := range c.keptRanges {
			b.WriteString(text[r[0]:r[1]])
		}
	}
	b.WriteString(text[c.itemsEnd:])
	return b.String(), true
}

// JoinItemsTo writes emitted, the text Emit wrote for a document decided
// from SplitItems's reduced text, with the entries others put back into
// its items map in key order. It returns false, having written nothing,
// when emitted has no items map it can join into (which Emit never
// writes) or when one of others' keys is also in emitted's items (a
// decision that added a split-off key, which the caller must not make).
func JoinItemsTo(w io.Writer, emitted []byte, others *Split) (bool, error) {
	if others.Len() == 0 {
		_, err := w.Write(emitted)
		return true, err
	}
	start, body, end, ok := itemsSection(emitted)
	if !ok {
		return false, nil
	}
	// The entries Emit wrote, in key order.
	type entry struct {
		key  string
		text []byte
	}
	var mine []entry
	for i := body; i < end; {
		j := i + 1 + bytes.IndexByte(emitted[i:end], '\n')
		k := j
		for k+4 <= end && string(emitted[k:k+4]) == "    " {
			k += bytes.IndexByte(emitted[k:end], '\n') + 1
		}
		key, _, okKey := entryKey(string(emitted[i+2 : j-1]))
		if !okKey {
			return false, nil
		}
		if _, found := findBlock(others.blocks, key); found {
			return false, nil
		}
		mine = append(mine, entry{key, emitted[i:k]})
		i = k
	}
	// Between the runs of the file's text come the entries Emit wrote:
	// gathered in one large buffer, they and the runs reach w in large
	// writes (a file the Python engine wrote keeps one item in a
	// hundred, say, and w, a small buffer on the file, would pass each
	// run on at once, a few system calls for every entry kept).
	bw := bufio.NewWriterSize(w, joinBuffer)
	ew := errWriter{w: bw}
	ew.write(emitted[:start])
	ew.writeString("items:\n")
	// Entries that were next to each other in the file are one run of
	// its text, written at once.
	o := 0
	run := func(upTo int) {
		for o < upTo {
			r := o + 1
			for r < upTo && others.blocks[r].Start == others.blocks[r-1].End {
				r++
			}
			ew.writeString(others.text[others.blocks[o].Start:others.blocks[r-1].End])
			o = r
		}
	}
	for _, m := range mine {
		upTo, _ := findBlock(others.blocks, m.key)
		run(upTo)
		ew.write(m.text)
	}
	run(len(others.blocks))
	ew.write(emitted[end:])
	if ew.err == nil {
		ew.err = bw.Flush()
	}
	return true, ew.err
}

// joinBuffer is the size of JoinItemsTo's buffer.
const joinBuffer = 256 << 10

// findBlock searches the key-ordered blocks for key.
func findBlock(blocks []ItemBlock, key string) (int, bool) {
	lo, hi := 0, len(blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if blocks[m].Key < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(blocks) && blocks[lo].Key == key
}

// itemsSection finds the top-level items entry of an emitted text: the
// offset of its line, of its first entry, and of the line after its last.
// An "items: {}" line counts as an empty section.
func itemsSection(t []byte) (start, body, end int, ok bool) {
	for i := 0; i < len(t); {
		j := i + 1 + bytes.IndexByte(t[i:], '\n')
		if j <= i {
			return 0, 0, 0, false
		}
		switch string(t[i:j]) {
		case "items:\n", "items: {}\n":
			end = j
			for end < len(t) && t[end] == ' ' {
				end += 1 + bytes.IndexByte(t[end:], '\n')
			}
			return i, j, end, true
		}
		i = j
	}
	return 0, 0, 0, false
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(b []byte) {
	if e.err == nil && len(b) > 0 {
		_, e.err = e.w.Write(b)
	}
}

func (e *errWriter) writeString(s string) {
	if e.err == nil && len(s) > 0 {
		_, e.err = io.WriteString(e.w, s)
	}
}

// canonicalScan checks a text line by line and finds its items entries.
// Offsets are the text's; text is the part of it at hand, from offset
// base on (all of it for SplitItems, a window of the reader's buffer for
// ScanItems).
type canonicalScan struct {
	text string
	base int
	keep func(key, block string) bool
	lines
	// Offsets: the line after the items line, the first entry of items
	// (after the blank lines and comments that may stand between; -1
	// before it) and the line after its last.
	itemsBody, firstEntry, itemsEnd int
	inItems                         bool
	// The current entry of items, from its key line (-1: none).
	entryStart int
	entryKey   string
	// entryOdd: the entry holds a line in the reference writer's form
	// (tolerate), so SplitItems keeps it in the reduced text. entryAside:
	// it holds a blank line or a comment (aside), so both scans keep it.
	entryOdd, entryAside bool
	keptRanges           [][2]int
	// The entries left out of SplitItems's reduced text: listed when
	// listOthers, counted always.
	listOthers             bool
	others                 []ItemBlock
	othersCount, othersLen int

	// ScanItems: the reduced text is built as the lines go by (stream);
	// inEntry says the last line belongs to an entry of items.
	stream           bool
	out              []byte
	inEntry          bool
	keptAny, dropped bool
}

func (c *canonicalScan) scan() bool {
	t := c.text
	if t == "" || t[len(t)-1] != '\n' {
		return false
	}
	c.itemsBody, c.firstEntry, c.itemsEnd, c.entryStart = -1, -1, -1, -1
	for pos := 0; pos < len(t); {
		if pos = runLines[toSplit](&c.lines, t, pos, nil, c); pos == len(t) {
			break
		}
		next, ok := c.next(pos)
		if !ok {
			return false
		}
		pos = next
	}
	return c.end(len(t))
}

// end closes the text, which ends at offset end, and says whether it
// was complete.
func (c *canonicalScan) end(end int) bool {
	c.endEntry(end)
	if c.inItems {
		c.endItems(end)
	}
	return !c.opening && c.rules.complete()
}

// endItems closes the block of items entries, which ends at end. A
// streamed reduced text whose entries were all left out ends in the
// items line, and the blank lines or comments after it, if any: the
// items line becomes "items: {}", and they go, as in SplitItems's.
func (c *canonicalScan) endItems(end int) {
	c.inItems = false
	c.itemsEnd = end
	if c.stream && c.dropped && !c.keptAny {
		for {
			i := bytes.LastIndexByte(c.out[:len(c.out)-1], '\n') + 1
			if !isAside(string(c.out[i : len(c.out)-1])) {
				break
			}
			c.out = c.out[:i]
		}
		c.out = append(c.out[:len(c.out)-1], " {}\n"...)
	}
}

// scanBuffer is the size ScanItems's buffer starts at (a variable for
// the tests, which make the windows small).
var scanBuffer = 256 << 10

// ScanItems is SplitItems for a command that writes nothing (cursor-get,
// and validate until it finds an item to change): it reads the text from
// r, at most limit bytes, through a buffer, and returns only the reduced
// text, which it builds as it goes; the text is never held whole. keep
// sees each entry's key and text, which it must not keep past the call.
// The reduced text is SplitItems's less the entries in the reference
// writer's forms that keep does not want (SplitItems keeps those whatever
// keep says, because its reduced text is emitted; this one never is, and
// Parse reads such an entry on its own as it reads Emit's form of it, so
// the document lacks it as it lacks the others left out): it is the text
// without every entry keep does not want. ok is false where SplitItems's
// is, and on a read error or more than limit bytes: the caller must then
// read the text whole.
func ScanItems(r io.Reader, limit int64, rules LoadRules, keep func(key, block string) bool) (reduced string, ok bool) {
	rs, usable := rules.compile()
	if !usable {
		return "", false
	}
	c := canonicalScan{keep: keep, stream: true, lines: lines{rules: rs}}
	c.itemsBody, c.firstEntry, c.itemsEnd, c.entryStart = -1, -1, -1, -1
	lr := newLineReader(r, limit, scanBuffer)
	for start := 0; ; { // start: where the window's next line starts
		// Nothing taken from the window outlives the next fill but the
		// keys detach copies.
		w := lr.window()
		c.text = w
		for start < len(w) {
			if next := runLines[toSplit](&c.lines, w, start, nil, &c); next != start {
				if !c.inEntry {
					c.out = append(c.out, w[start:next]...)
				}
				if start = next; start == len(w) {
					break
				}
			}
			next, ok := c.next(start)
			if !ok {
				return "", false
			}
			if !c.inEntry {
				c.out = append(c.out, w[start:next]...)
			}
			start = next
		}
		if lr.eof {
			if start != lr.have || c.base+lr.have == 0 {
				return "", false // no final newline, or no text
			}
			break
		}
		// Keep the partial line and the entry it is in, then read more
		// after them.
		from := start
		if c.entryStart >= 0 {
			from = min(from, c.entryStart-c.base)
		}
		c.detach()
		if !lr.fill(from) {
			return "", false
		}
		start -= from
		c.base += from
	}
	if !c.end(c.base + lr.have) {
		return "", false
	}
	return string(c.out), true
}

// detach copies the keys the scan still needs out of the window, which
// the next read overwrites.
func (c *canonicalScan) detach() {
	c.blocks.detach()
	c.entryKey = strings.Clone(c.entryKey)
}

// endEntry closes the current items entry, which ends at end.
func (c *canonicalScan) endEntry(end int) {
	if c.entryStart < 0 {
		return
	}
	block := c.text[c.entryStart-c.base : end-c.base]
	if c.firstEntry < 0 {
		c.firstEntry = c.entryStart
	}
	// An entry in the reference writer's forms stays in SplitItems's
	// reduced text, to be parsed and written in Emit's; ScanItems's is
	// never written, so keep decides for it as for any other. An entry
	// with a blank line or a comment stays in both: it is not Emit's
	// text, and keep may read its lines as Emit's (closedStatus does).
	switch kept := c.entryAside || c.entryOdd && !c.stream || c.keep(c.entryKey, block); {
	case c.stream && kept:
		c.out = append(c.out, block...)
		c.keptAny = true
	case c.stream:
		c.dropped = true
	case kept:
		c.keptRanges = append(c.keptRanges, [2]int{c.entryStart, end})
	default:
		if c.listOthers {
			c.others = append(c.others, ItemBlock{c.entryKey, c.entryStart, end})
		}
		c.othersCount++
		c.othersLen += len(block)
	}
	c.entryStart, c.entryKey, c.entryOdd, c.entryAside = -1, "", false, false
}

// next checks the line that starts at offset p of the window (which ends
// in "\n") and returns the offset of the line after it. The usual lines
// (a key Emit writes without escapes, then nothing, or a string of raw
// printable ASCII, or another value) are read in one pass: the string's
// scan finds the line's end. Any other line goes to line, which reads it
// by the same rules, so the answer is the same either way.
func (c *canonicalScan) next(p int) (int, bool) {
	l, next, ok := readUsualLine(c.text, p)
	switch {
	case !ok:
		return c.slow(p) // line: a blank line or a comment at any indent, or declined
	case l.indent%2 != 0:
		return 0, false
	case l.quoted && IsBareKey(l.key):
		return 0, false // a key Emit writes bare
	case !l.quoted && isYAML11Word(l.key):
		return c.slow(p) // the reference writer's form of a key Emit quotes
	}
	// A raw string is canonical as it is.
	return next, c.entry(c.base+p, next-1-p, l.indent/2, l.key, l.after, l.raw, false)
}

// slow checks the line at window offset p with line.
func (c *canonicalScan) slow(p int) (int, bool) {
	nl := p + strings.IndexByte(c.text[p:], '\n')
	return nl + 1, c.line(c.base+p, c.text[p:nl])
}

// line checks the line s (without its "\n") at offset pos.
func (c *canonicalScan) line(pos int, s string) bool {
	if isAside(s) {
		return c.aside(s)
	}
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	if n%2 != 0 {
		return false
	}
	key, after, ok := entryKey(s[n:])
	odd := false
	if !ok {
		key, after, ok = referenceKey(s[n:])
		odd = true
	}
	if !ok {
		return false
	}
	return c.entry(pos, len(s), n/2, key, after, false, odd)
}

// isAside reports whether the line s (without its line end) is one Parse
// leaves out wherever it stands: blank (spaces and tabs only) or a
// comment (its first byte after the spaces is '#').
func isAside(s string) bool {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n == len(s) || s[n] == '#' || strings.Trim(s[n:], " \t") == ""
}

// aside takes a blank line or a comment s (isAside): it changes nothing
// that Parse reads, and stays where it is in the reduced text. In an
// entry of items, it makes the entry stay in it too (entryAside). A line
// with a CR (a line end to Parse, which would read the rest as a line of
// its own) or invalid UTF-8 (which makes the file CORRUPT) is declined.
func (c *canonicalScan) aside(s string) bool {
	if strings.IndexByte(s, '\r') >= 0 || !utf8.ValidString(s) {
		return false
	}
	if c.entryStart >= 0 {
		c.entryAside = true
	}
	return true
}

// referenceKey reads the key of an entry line when it is written in the
// reference writer's form where Emit writes another: a YAML 1.1 word
// bare, as that writer writes every key of the bare-key shape (Emit
// quotes these, D8), or a JSON string with the characters of D6 raw
// (referenceString). Parse reads either as that string key, on this line
// alone.
func referenceKey(s string) (key, after string, ok bool) {
	if s != "" && s[0] == '"' {
		k, n, err := pyjson.DecodeStringPrefix(s)
		if err != nil || n >= len(s) || s[n] != ':' || isBareWord(k) || !referenceString(s[:n], k) {
			return "", "", false
		}
		return k, s[n+1:], true
	}
	i := bareColon(s)
	if i < 0 || !isYAML11Word(s[:i]) {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// referenceString reports whether q, a JSON string token that decodes to
// s, is spelled as the reference writer spells s: '"', '\\' and the
// characters below U+0020 escaped as AppendQuoted escapes them, everything
// else raw, the characters of D6 (DEL, the C1 controls, U+2028, U+2029,
// U+FFFE, U+FFFF) included, where Emit escapes them. So q holds no raw
// CR, which would end Parse's line.
func referenceString(q, s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	var buf [128]byte
	return string(appendQuoted(buf[:0], s, false)) == q
}

// entry takes the line at offset pos, of length n without its "\n", at
// depth: key, then after (the text after the colon). canon says the
// value in after is already known to be canonical; odd, that the key is
// written in the reference writer's form, not Emit's (referenceKey).
func (c *canonicalScan) entry(pos, n, depth int, key, after string, canon, odd bool) bool {
	if _, ok := c.enter(depth); !ok {
		return false
	}
	if c.inItems && depth <= 1 {
		c.endEntry(pos)
		if depth == 0 {
			c.endItems(pos)
		}
	}
	c.inEntry = c.inItems && depth >= 1
	if c.rules.rewrites(key) {
		return false
	}
	blk, _, ok := c.take(depth, key) // key: of the text (ScanItems: of the window, which detach copies out), or a decoded copy
	if !ok {
		return false
	}
	if c.inItems && depth == 1 {
		c.entryStart, c.entryKey = pos, key
	}
	if after == "" {
		if depth+1 >= transcodeMaxDepth {
			return false
		}
		if depth == 0 {
			if key == "schema_version" {
				return false // a version this engine never writes: the general path's
			}
			c.rules.top(key, true, "")
			if key == "items" {
				c.inItems, c.itemsBody = true, pos+n+1
			}
		}
		c.push(blk, key)
		return !odd || c.tolerate(depth)
	}
	if after[0] != ' ' {
		return false
	}
	v := after[1:]
	if depth == 0 {
		if key == "items" {
			c.itemsBody, c.itemsEnd = pos+n+1, pos+n+1
		}
		if !c.rules.top(key, false, v) {
			return false
		}
	}
	if canon || canonicalValue(v) {
		return !odd || c.tolerate(depth)
	}
	return (isReferenceFloat(v) || isReferenceJSON(v)) && c.tolerate(depth)
}

// isReferenceJSON: v is a string or an inline list as the reference
// writer writes it where Emit escapes: the characters of D6 raw in its
// strings and keys (referenceString), everything else as Emit writes it.
// Parse reads it, on this line alone, as Emit's spelling of the same
// value.
func isReferenceJSON(v string) bool {
	switch {
	case v == "" || !utf8.ValidString(v):
		return false
	case v[0] == '"':
		s, n, err := pyjson.DecodeStringPrefix(v)
		return err == nil && n == len(v) && referenceString(v, s)
	case v[0] == '[':
		x, n, err := pyjson.DecodeFilePrefix(v, maxDepth-transcodeMaxDepth)
		return err == nil && n == len(v) && string(appendInlineQ(nil, x, false)) == v
	}
	return false
}

// isReferenceFloat: v is the reference writer's repr of a non-finite
// float at block level, which Parse reads, on this line alone, as that
// word, a string (Emit writes it quoted).
func isReferenceFloat(v string) bool {
	return v == "nan" || v == "inf" || v == "-inf"
}

// tolerate takes a line at depth that is not Emit's text but is in the
// reference writer's form (a bare YAML 1.1 word as its key, a bare nan,
// inf or -inf as its value, the characters of D6 raw in its quoted key,
// string value or inline list), which Parse reads, on that line alone,
// as it reads Emit's form of the same entry. Such a line can stay in the
// reduced text, which is parsed and emitted anyway, but must not be split
// off: below a top-level block other than items (lease, sources,
// last_run, ...) it is taken as it is, inside an items entry (two or more
// levels down) it makes that entry stay in the reduced text whatever keep
// says. Anywhere else (a top-level line, an items entry's own line) the
// text is declined.
func (c *canonicalScan) tolerate(depth int) bool {
	switch {
	case depth == 0:
		return false
	case !c.inItems:
		return true
	case depth >= 2:
		c.entryOdd = true
		return true
	}
	return false
}

// entryKey reads the key of an entry line when it is written as Emit
// writes keys: bare exactly when IsBareKey, else as AppendQuoted spells
// it; followed by ':' and the rest of the line.
func entryKey(s string) (key, after string, ok bool) {
	if s == "" {
		return "", "", false
	}
	if s[0] != '"' {
		i := bareColon(s)
		if i < 0 || isYAML11Word(s[:i]) {
			return "", "", false
		}
		return s[:i], s[i+1:], true
	}
	i := pyjson.SkipRawASCII(s, 1)
	if i < len(s) && s[i] == '"' {
		k := s[1:i]
		if i+1 >= len(s) || s[i+1] != ':' || IsBareKey(k) {
			return "", "", false
		}
		return k, s[i+2:], true
	}
	k, n, err := pyjson.DecodeStringPrefix(s)
	if err != nil || n >= len(s) || s[n] != ':' || IsBareKey(k) || string(AppendQuoted(nil, k)) != s[:n] {
		return "", "", false
	}
	return k, s[n+1:], true
}

// canonicalValue reports whether v is exactly the text Emit writes for the
// value Parse reads from it at block level.
func canonicalValue(v string) bool {
	if v == "" {
		return false
	}
	switch v {
	case "null", "true", "false", "{}", "[]":
		return true
	}
	switch c := v[0]; {
	case c == '"':
		i := pyjson.SkipRawASCII(v, 1)
		if i == len(v)-1 && v[i] == '"' {
			return true
		}
		return canonicalString(v, i)
	case c >= '0' && c <= '9' || c == '-':
		return canonicalNumber(v)
	case c == '[':
		if simpleList(v) {
			return true
		}
		if !utf8.ValidString(v) || strings.IndexByte(v, '\r') >= 0 {
			return false
		}
		x, n, err := pyjson.DecodeFilePrefix(v, maxDepth-transcodeMaxDepth)
		return err == nil && n == len(v) && string(appendInline(nil, x)) == v
	}
	return false
}

// canonicalString checks a JSON string token from index i on (all before
// it is raw printable ASCII): raw non-ASCII is canonical unless D6 escapes
// it; an escape sends the whole token to the exact comparison.
func canonicalString(v string, i int) bool {
	for i < len(v) {
		c := v[i]
		switch {
		case c == '"':
			return i == len(v)-1
		case c == '\\':
			s, n, err := pyjson.DecodeStringPrefix(v)
			return err == nil && n == len(v) && string(AppendQuoted(nil, s)) == v
		case c < utf8.RuneSelf:
			return false // a control character or DEL, raw
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && size <= 1 || needsEscape(r) {
			return false
		}
		i = pyjson.SkipRawASCII(v, i+size)
	}
	return false
}

// canonicalNumber: an integer as big.Int writes it (no leading zero, no
// "-0", at most 18 digits here) or a finite float as pyjson.AppendFloat
// writes it.
func canonicalNumber(v string) bool {
	i := 0
	if v[0] == '-' {
		i++
	}
	if i == len(v) {
		return false
	}
	if allDigits(v[i:]) {
		d := v[i:]
		return len(d) <= 18 && (d[0] != '0' || d == "0" && i == 0)
	}
	if isFloat, _, ok := numberShape(v); !ok || !isFloat {
		return false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) {
		return false
	}
	var buf [32]byte
	return string(pyjson.AppendFloat(buf[:0], f)) == v
}
