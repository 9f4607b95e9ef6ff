package yamlsubset

import (
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/storage/outtext"
)

// ReadJSON is the fast path of the read subcommand: it turns the state
// document that r holds into the json.dumps text of that document (what
// pyjson.Encode writes for the document Parse reads, after the engine's
// load rules), line by line, without building a tree. It reads at most
// limit bytes of r.
//
// It serves only the files this engine writes, in the strict form of
// §15.1 for their layout, and the same with blank lines and comments
// added (a hand edit), which Parse leaves out: every line ends in "\n" (no
// CR, a final newline), every level indented two more spaces than
// its parent, every `key:` followed by its entries, bare keys in the
// writer's pattern or JSON string keys, the keys of each map in strictly
// increasing §15.1.6 order (so no key repeats), schema_version, sources and
// items present at the top, sources and items maps, and no key named
// verified_merge_sha anywhere (the load-time rename of §2.5): the engine's
// load rules, which rules holds (LoadRules). Values are
// read by the same rules as Parse's. On anything else, a read error or
// more than limit bytes, ok is false and the caller must read the file the
// general way (Parse and the engine's checks): the answer, CORRUPT and
// ERROR reasons included, is then theirs. Declining is always safe.
//
// The text comes back in chunks (an outtext.Text) the caller writes as
// they are: size, the length r is expected to have (a hint: 0 when not
// known), sizes the first, which then takes all of the usual text (see
// outputChunk), so the text is held once, never copied as it grows.
func ReadJSON(r io.Reader, size, limit int64, rules LoadRules) (text *outtext.Text, ok bool) {
	rs, usable := rules.compile()
	if !usable {
		return nil, false
	}
	t := transcoder{first: int(min(max(size, 0), limit)), out: new(outtext.Text), lines: lines{rules: rs}}
	defer func() {
		if !ok {
			t.out.Free() // declined: its memory goes back now, not at the next GC
		}
	}()
	// Lines are cut from a buffer filled by large reads; a line longer
	// than half the buffer doubles it.
	lr := newLineReader(r, limit, readBuffer)
	for start := 0; ; {
		// Nothing read from the window outlives the next fill but the
		// keys kept in t.open, which detach copies first.
		w := lr.window()
		for start < len(w) {
			if start = runLines[toJSON](&t.lines, w, start, &t, nil); start == len(w) {
				break
			}
			next, ok := t.next(w, start)
			if !ok {
				return nil, false
			}
			start = next
		}
		if lr.eof {
			if start != lr.have {
				return nil, false // no final newline: not this engine's text
			}
			break
		}
		// Keep the partial line, then read more after it.
		t.detach()
		if !lr.fill(start) {
			return nil, false
		}
		start = 0
	}
	if !t.finish() {
		return nil, false
	}
	return t.out, true
}

// readBuffer is the size ReadJSON's buffer starts at (a variable for the
// tests, which make it small).
var readBuffer = 256 << 10

// transcodeMaxDepth bounds the block nesting the fast path takes; deeper
// files (far beyond anything the engine's callers write) are left to Parse,
// whose limits decide.
const transcodeMaxDepth = 64

// chunkSize is the size of the output chunks after the first.
const chunkSize = 1 << 20

// outputChunk is an empty output chunk of capacity n, from t's text (a
// large one is memory of its own, which a pipe can take by reference:
// outtext). The text of a large file is tens of megabytes of memory the
// process has not used before, and faulting it in page by page can cost
// more than the transcoding, so a chunk that large asks the kernel for
// huge pages where the process allows it (AdviseHugePages: the text is
// the same either way).
func (t *transcoder) outputChunk(n int) []byte {
	b := t.out.Chunk(n)
	AdviseHugePages(b)
	return b
}

// transcoder holds the open blocks of the document being transcoded.
type transcoder struct {
	out   *outtext.Text // the chunks done
	buf   []byte
	first int // the expected length of the text read
	lines
}

// next transcodes the line that starts at offset p of the window w
// (which ends in "\n") and returns the offset of the line after it. The
// usual lines (a bare key, or a quoted one without escapes, then nothing,
// or a string of raw printable ASCII, or another value) are read in one
// pass: the string's scan finds the line's end. Any other line goes to
// line, which reads it by the same rules.
func (t *transcoder) next(w string, p int) (int, bool) {
	l, next, ok := readUsualLine(w, p)
	switch {
	case !ok:
		return t.slow(w, p)
	case l.indent%2 != 0:
		return 0, false
	}
	// A raw string is the same text in both forms.
	return next, t.entry(l.indent/2, l.entry, l.key, l.after, l.raw)
}

// shapedLines transcodes, from offset p of the window w into buf, the
// lines of a block below depth 1 that runLines would take for the keys
// shape holds from pos on (of shapeLen), at the indent ind (below 8), each
// with a string value (CopyPlain's) or a value verbatim takes, as
// runLines does for ReadJSON, and returns the offset of the first line it
// leaves to runLines, buf, the place in the block of that line, and the
// offset of the last key it read. It is the JSON sink's writer of the
// lines a shape foretells: it keeps only what those lines need, which
// fits in registers; runLines holds the state of every other kind of
// line and of both sinks, which does not, and would be spilled and
// reloaded around every call.
func shapedLines(w string, p int, buf []byte, shape *[maxShape]scanShape, shapeLen, pos, ind int) (int, []byte, int, int) {
	out := buf[:cap(buf)]
	o := len(buf)
	lastQ := 0
	// Room for a line's own text and the block CopyPlain may write after
	// it, short of a full chunk (chunkFull).
	lim := len(out) - max(min(len(out)/8, chunkSize/4), 64)
	for pos < shapeLen && p+16 <= len(w) && o <= lim {
		if bits.TrailingZeros64(load64(w, p)^spaces8)>>3 != ind {
			break
		}
		q := p + ind
		sk := &shape[pos]
		if !sk.foretells(w, q) {
			break
		}
		k := q + sk.n // the colon
		if w[k+1] != ' ' {
			break
		}
		l := o // the line's text starts here
		if pos > 0 {
			out[l], out[l+1] = ',', ' '
			l += 2
		}
		out[l] = '"'
		binary.LittleEndian.PutUint64(out[l+1:], load64(w, q)) // the key and more, of which n bytes count
		l += sk.n + 1
		v := k + 2
		if w[v] == '"' {
			binary.LittleEndian.PutUint32(out[l:], '"'|':'<<8|' '<<16|'"'<<24)
			l += 4
			n, stopped := pyjson.CopyPlain(out[l:], w[v+1:])
			if !stopped {
				break
			}
			j := v + 1 + n
			if w[j] != '"' || w[j+1] != '\n' {
				break
			}
			o, p = l+n+1, j+2
		} else {
			e := v + strings.IndexByte(w[v:], '\n')
			if e < v || l+1+e-k > len(out) || !verbatim(w[v:e]) {
				break // a value longer than the room (a long list) is runLines's, which appends
			}
			out[l] = '"'
			o, p = l+1+copy(out[l+1:], w[k:e]), e+1
		}
		lastQ = q
		pos++
	}
	return p, out[:o], pos, lastQ
}

// verbatim reports whether value reads the value text v as the same text:
// null, true, false, an integer of at most 18 digits without a sign or a
// leading zero, or an inline list simpleList takes.
func verbatim(v string) bool {
	switch {
	case v == "":
		return false
	case v[0] >= '1' && v[0] <= '9':
		return len(v) <= 18 && allDigits(v)
	case v[0] == '[':
		return simpleList(v)
	}
	return v == "null" || v == "true" || v == "false"
}

// newChunk starts a new output chunk when the current one is nearly full.
func (t *transcoder) newChunk() {
	if chunkFull(t.buf) {
		// A new chunk, of chunkSize (or twice the last, if smaller): a
		// chunk is never copied while it grows, unless one line's text
		// outgrows what is left of it.
		t.out.Add(t.buf)
		t.buf = t.outputChunk(min(2*cap(t.buf), chunkSize+chunkSize/8))
	}
}

// chunkFull reports whether the output chunk b is nearly full.
func chunkFull(b []byte) bool {
	return cap(b)-len(b) < min(cap(b)/8, chunkSize/4)
}

// slow transcodes the line at offset p of w with line.
func (t *transcoder) slow(w string, p int) (int, bool) {
	nl := p + strings.IndexByte(w[p:], '\n')
	return nl + 1, t.line(w[p:nl])
}

// line transcodes one line s, without its "\n".
func (t *transcoder) line(s string) bool {
	// No UTF-8 or CR check here: every reading below takes ASCII only,
	// or decodes and checks what it takes, or checks both (value).
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	if n == len(s) || s[n] == '#' || strings.Trim(s[n:], " \t") == "" {
		// A blank line or a comment, which Parse leaves out wherever it
		// is, unless it holds a CR (a line end to Parse, which would
		// read the rest as a line of its own) or invalid UTF-8 (which
		// makes the whole file CORRUPT).
		return strings.IndexByte(s, '\r') < 0 && utf8.ValidString(s)
	}
	if n%2 != 0 {
		return false // an odd indent
	}
	c := s[n:]
	if c[0] == '\t' || c[0] == '\r' {
		return false
	}
	key, after, ok := t.key(c)
	if !ok {
		return false
	}
	return t.entry(n/2, c, key, after, false)
}

// entry transcodes the entry c (its line from the key on) at depth: key,
// then after, the text after the colon. raw says after is " " and a
// string of raw printable ASCII.
func (t *transcoder) entry(depth int, c, key, after string, raw bool) bool {
	if len(t.open) == 0 {
		t.buf = t.outputChunk(t.first + t.first/8 + 64<<10)
		t.buf = append(t.buf, '{')
	}
	closed, ok := t.enter(depth)
	if !ok {
		return false
	}
	for range closed {
		t.buf = append(t.buf, '}')
	}
	if t.rules.rewrites(key) {
		return false
	}
	blk, had, ok := t.take(depth, key)
	if !ok {
		return false // out of order or repeated: Parse's rules decide
	}
	if had {
		t.buf = append(t.buf, ',', ' ')
	}
	switch {
	case c[0] != '"':
		// A bare key is ASCII letters, digits and "_.-".
		t.buf = append(t.buf, '"')
		t.buf = append(t.buf, key...)
		t.buf = append(t.buf, '"', ':', ' ')
	case len(key)+2 == len(c)-len(after)-1 && pyjson.SkipRawASCII(key, 0) == len(key):
		// A quoted key without escapes, printable ASCII: the same text
		// in both forms.
		t.buf = append(t.buf, c[:len(key)+2]...)
		t.buf = append(t.buf, ':', ' ')
	default:
		t.buf = pyjson.AppendASCIIString(t.buf, key)
		t.buf = append(t.buf, ": "...)
	}
	if after != "" && after[0] != ' ' {
		return false
	}
	var rest string
	if raw {
		rest = after[1:]
	} else {
		rest = trimBlanks(after)
	}
	if depth == 0 && !t.rules.top(key, rest == "", rest) {
		return false // a map written inline, or not a map: Parse's and the engine's rules decide
	}
	if rest == "" {
		if depth+1 >= transcodeMaxDepth {
			return false
		}
		t.buf = append(t.buf, '{')
		t.push(blk, key)
		return true
	}
	if raw {
		t.buf = append(t.buf, rest...)
	} else if !t.value(rest, depth) {
		return false
	}
	t.newChunk()
	return true
}

// key reads the key of an entry line as splitKey does, for the key forms
// the fast path takes: a bare key in the writer's pattern, or a JSON
// string followed at once by ':'.
func (t *transcoder) key(c string) (key, after string, ok bool) {
	if c[0] == '"' {
		k, n, err := pyjson.DecodeStringPrefix(c)
		if err != nil || n >= len(c) || c[n] != ':' {
			return "", "", false
		}
		return k, c[n+1:], true
	}
	i := bareColon(c)
	if i < 0 {
		return "", "", false
	}
	return c[:i], c[i+1:], true
}

// value appends the JSON of the value text v of a block entry at depth.
func (t *transcoder) value(v string, depth int) bool {
	switch v {
	case "null", "true", "false":
		t.buf = append(t.buf, v...)
		return true
	}
	switch c := v[0]; {
	case c == '"':
		if t.str(v) {
			return true
		}
	case c >= '1' && c <= '9' && len(v) <= 18 && allDigits(v):
		t.buf = append(t.buf, v...)
		return true
	case c == '-' || c >= '0' && c <= '9':
		if t.number(v) {
			return true
		}
	case c == '[':
		if t.list(v) {
			return true
		}
	}
	if !utf8.ValidString(v) || strings.IndexByte(v, '\r') >= 0 {
		return false // Parse refuses the first and splits lines at the second
	}
	x, err := parseValue(v, maxDepth-depth-1, 0)
	if err != nil {
		return false
	}
	t.buf = pyjson.AppendEncode(t.buf, x)
	return true
}

// str appends the JSON of the string value v when it is one JSON string
// without escapes filling v (the usual case), as pyjson.Encode writes the
// string Parse reads; otherwise it appends nothing and returns false. The
// scan is the decoder's: raw control characters and invalid UTF-8 are
// left to it.
func (t *transcoder) str(v string) bool {
	i := pyjson.SkipRawASCII(v, 1)
	if i == len(v)-1 && v[i] == '"' {
		t.buf = append(t.buf, v...) // printable ASCII: the same text in both forms
		return true
	}
	for i < len(v) {
		c := v[i]
		switch {
		case c == '"':
			if i != len(v)-1 {
				return false
			}
			t.buf = pyjson.AppendASCIIString(t.buf, v[1:i])
			return true
		case c == '\\' || c < 0x20:
			return false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError && size <= 1 {
				return false
			}
			i += size
		}
		i = pyjson.SkipRawASCII(v, i)
	}
	return false
}

// list appends the JSON of an inline list when simpleList takes it: its
// text is then the same in both forms.
func (t *transcoder) list(v string) bool {
	if !simpleList(v) {
		return false
	}
	t.buf = append(t.buf, v...)
	return true
}

// simpleList reports whether v is exactly an inline list of strings of
// printable ASCII without escapes, integers of at most 18 digits without
// a sign or a leading zero, null, true and false, with ", " between them:
// the text Emit writes for such a list, and json.dumps too.
func simpleList(v string) bool {
	if v == "[]" {
		return true
	}
	if v == "" || v[0] != '[' {
		return false
	}
	for i := 1; ; {
		j := i
		switch {
		case j < len(v) && v[j] == '"':
			j = pyjson.SkipRawASCII(v, j+1)
			if j >= len(v) || v[j] != '"' {
				return false
			}
			j++
		case j < len(v) && v[j] >= '1' && v[j] <= '9':
			j = skipDigits(v, j)
			if j-i > 18 {
				return false
			}
		case strings.HasPrefix(v[j:], "null"), strings.HasPrefix(v[j:], "true"):
			j += 4
		case strings.HasPrefix(v[j:], "false"):
			j += 5
		default:
			return false
		}
		switch {
		case j == len(v)-1 && v[j] == ']':
			return true
		case strings.HasPrefix(v[j:], ", "):
			i = j + 2
		default:
			return false
		}
	}
}

// number appends the JSON of the number v when v is exactly one JSON
// number that is a float (not overflowing) or an integer of at most 18
// digits, as pyjson.Encode writes the value Parse reads; otherwise it
// appends nothing and returns false.
func (t *transcoder) number(v string) bool {
	isFloat, intDigits, ok := numberShape(v)
	if !ok {
		return false
	}
	if isFloat {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) {
			return false
		}
		t.buf = pyjson.AppendFloat(t.buf, f)
		return true
	}
	if intDigits > 18 {
		return false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false
	}
	t.buf = strconv.AppendInt(t.buf, n, 10)
	return true
}

// numberShape reports whether v is exactly one JSON number
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), whether it is a float
// (it has a fraction or an exponent) and how many digits its integer part
// has.
func numberShape(v string) (isFloat bool, intDigits int, ok bool) {
	i := 0
	if v != "" && v[0] == '-' {
		i++
	}
	digits := i
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case i < len(v) && v[i] >= '1' && v[i] <= '9':
		i = skipDigits(v, i)
	default:
		return false, 0, false
	}
	intDigits = i - digits
	if i < len(v) && v[i] == '.' {
		j := skipDigits(v, i+1)
		if j == i+1 {
			return false, 0, false
		}
		i, isFloat = j, true
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := skipDigits(v, i)
		if j == i {
			return false, 0, false
		}
		i, isFloat = j, true
	}
	return isFloat, intDigits, i == len(v)
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// finish closes the open blocks and checks the top-level keys.
func (t *transcoder) finish() bool {
	if len(t.open) == 0 || t.opening || !t.rules.complete() {
		return false
	}
	for range t.open {
		t.buf = append(t.buf, '}')
	}
	t.out.Add(t.buf)
	return true
}
