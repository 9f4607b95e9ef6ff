package pyjson

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/stateguard/stateguard/model/value"
)

// Decode reads one JSON value that fills text apart from surrounding
// whitespace (" \t\n\r"), with Python json.loads semantics (see the package
// comment for the decisions where Python could not be followed): integers
// exact at any size (*big.Int), a number with '.', 'e' or 'E' a float64, a
// later duplicate key overwriting the value but keeping the first position.
// NaN, Infinity, -Infinity and floats that overflow to infinity are refused
// with ErrNonFinite (divergence D5); any other malformed text is ErrSyntax
// (wrapped, for errors.Is).
func Decode(text string) (value.Value, error) {
	return DecodeIn(text, nil)
}

// DecodeIn is Decode with the value's parts taken from a (nil allocates
// each part on its own).
func DecodeIn(text string, a *value.Arena) (value.Value, error) {
	d := decoder{text: text, maxDepth: MaxDepth, arena: a}
	d.skipSpace()
	v := d.value()
	if d.err == nil {
		d.skipSpace()
		if d.pos != len(d.text) {
			d.fail("extra data")
		}
	}
	return d.result(v)
}

// DecodeStringPrefix is DecodePrefix for text starting with '"': it reads
// one JSON string and returns it unboxed (for the reader's keys). Text
// without escapes comes back as a substring of text, not a copy.
func DecodeStringPrefix(text string) (string, int, error) {
	d := decoder{text: text}
	if text == "" || text[0] != '"' {
		d.fail("expecting string")
		return "", 0, d.err
	}
	s, ok := d.str()
	if !ok {
		return "", d.pos, d.err
	}
	return s, d.pos, nil
}

// DecodePrefix reads one JSON value at the very start of text (no leading
// whitespace) and reports how many bytes it used; the rest of text is left
// to the caller. maxDepth bounds the nesting of arrays and objects. Errors
// are as for Decode. The YAML-subset reader uses it for keys and values.
func DecodePrefix(text string, maxDepth int) (value.Value, int, error) {
	return decodePrefix(decoder{text: text, maxDepth: maxDepth})
}

// DecodeFilePrefix is DecodePrefix for the inline JSON of a state file: the
// literals NaN, Infinity and -Infinity inside an array (at any depth below
// it) are read as floats, because the reference writer's json.dumps puts a
// non-finite float of a list there and its reader takes it back as that
// float (spec/sweep-state.md §15.2.3). Anywhere else they, and a number
// that overflows to infinity, are still ErrNonFinite.
func DecodeFilePrefix(text string, maxDepth int) (value.Value, int, error) {
	return decodePrefix(decoder{text: text, maxDepth: maxDepth, listFloats: true})
}

// DecodeFilePrefixIn is DecodeFilePrefix with the value's parts taken from
// a (the reader's arena for the whole document; nil allocates each part).
func DecodeFilePrefixIn(text string, maxDepth int, a *value.Arena) (value.Value, int, error) {
	return decodePrefix(decoder{text: text, maxDepth: maxDepth, listFloats: true, arena: a})
}

// decodePrefix reads one value with d and says where it ended.
func decodePrefix(d decoder) (value.Value, int, error) {
	v, err := d.result(d.value())
	return v, d.pos, err
}

// decoder is a recursive-descent reader over text. The first error stops
// it; a non-finite number is only noted so that a later syntax error still
// wins, as Python would fail on the syntax first.
type decoder struct {
	text      string
	pos       int
	depth     int
	maxDepth  int
	err       error
	nonFinite bool
	// listFloats admits the non-finite literals inside an array;
	// arrays counts the arrays open around the current position.
	listFloats bool
	arrays     int
	arena      *value.Arena // nil: each part allocated on its own
	// keys[i] and vals[i] gather the members of the object open at depth
	// i+1 (scratch, reused across siblings).
	keys [][]string
	vals [][]value.Value
}

func (d *decoder) result(v value.Value) (value.Value, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.nonFinite {
		return nil, fmt.Errorf("%w", ErrNonFinite)
	}
	return v, nil
}

// fail records a syntax error; the message names the position, never the
// input text (inputs may be private).
func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at offset %d", ErrSyntax, what, d.pos)
	}
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.text) {
		switch d.text[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) hasPrefix(p string) bool {
	return len(d.text)-d.pos >= len(p) && d.text[d.pos:d.pos+len(p)] == p
}

func (d *decoder) value() value.Value {
	if d.pos >= len(d.text) {
		d.fail("expecting value")
		return nil
	}
	switch c := d.text[d.pos]; {
	case c == '"':
		if s, ok := d.str(); ok {
			return d.arena.String(s)
		}
		return nil
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == 'n' && d.hasPrefix("null"):
		d.pos += 4
		return nil
	case c == 't' && d.hasPrefix("true"):
		d.pos += 4
		return true
	case c == 'f' && d.hasPrefix("false"):
		d.pos += 5
		return false
	case c == 'N' && d.hasPrefix("NaN"):
		d.pos += 3
		return d.nonFiniteLiteral(math.NaN())
	case c == 'I' && d.hasPrefix("Infinity"):
		d.pos += 8
		return d.nonFiniteLiteral(math.Inf(1))
	case c == '-' && d.hasPrefix("-Infinity"):
		d.pos += 9
		return d.nonFiniteLiteral(math.Inf(-1))
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	d.fail("expecting value")
	return nil
}

// nonFiniteLiteral is the value of NaN, Infinity or -Infinity: f where the
// decoder admits it, else a noted refusal.
func (d *decoder) nonFiniteLiteral(f float64) value.Value {
	if d.listFloats && d.arrays > 0 {
		return d.arena.Float(f)
	}
	d.nonFinite = true
	return nil
}

func (d *decoder) enter() bool {
	d.depth++
	if d.depth > d.maxDepth {
		d.fail("nesting too deep")
		return false
	}
	return true
}

func (d *decoder) object() value.Value {
	if !d.enter() {
		return nil
	}
	defer func() { d.depth-- }()
	d.pos++ // '{'
	d.skipSpace()
	if d.pos < len(d.text) && d.text[d.pos] == '}' {
		d.pos++
		return d.arena.NewMapSize(0)
	}
	// The members gather in this depth's scratch slices, reused across
	// siblings, so the map is built once at its final size.
	for len(d.keys) < d.depth {
		d.keys = append(d.keys, nil)
		d.vals = append(d.vals, nil)
	}
	level := d.depth - 1
	keys, vals := d.keys[level][:0], d.vals[level][:0]
	defer func() {
		clear(keys)
		clear(vals)
		d.keys[level], d.vals[level] = keys[:0], vals[:0]
	}()
	for {
		if d.pos >= len(d.text) || d.text[d.pos] != '"' {
			d.fail("expecting property name")
			return nil
		}
		k, ok := d.str()
		if !ok {
			return nil
		}
		d.skipSpace()
		if d.pos >= len(d.text) || d.text[d.pos] != ':' {
			d.fail("expecting ':'")
			return nil
		}
		d.pos++
		d.skipSpace()
		v := d.value()
		if d.err != nil {
			return nil
		}
		if len(keys) == cap(keys) {
			// Doubled: append grows a large slice by only a quarter,
			// which for an object of many entries (a legacy file's
			// items) leaves several times its size behind in the
			// arrays it outgrew.
			keys, vals = slices.Grow(keys, len(keys)+1), slices.Grow(vals, len(vals)+1)
		}
		keys, vals = append(keys, k), append(vals, v)
		d.skipSpace()
		if d.pos >= len(d.text) {
			d.fail("expecting ',' or '}'")
			return nil
		}
		switch d.text[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case '}':
			d.pos++
			return d.arena.MapOf(keys, vals) // a repeated key: the last value, the first position
		default:
			d.fail("expecting ',' or '}'")
			return nil
		}
	}
}

func (d *decoder) array() value.Value {
	if !d.enter() {
		return nil
	}
	d.arrays++
	defer func() { d.depth--; d.arrays-- }()
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.text) && d.text[d.pos] == ']' {
		d.pos++
		return []value.Value{}
	}
	// Short lists (the usual labels) gather on the stack and are copied
	// out once at their final length.
	var small [8]value.Value
	list := small[:0]
	for {
		v := d.value()
		if d.err != nil {
			return nil
		}
		list = append(list, v)
		d.skipSpace()
		if d.pos >= len(d.text) {
			d.fail("expecting ',' or ']'")
			return nil
		}
		switch d.text[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			return d.arena.ListValue(append(d.arena.List(len(list))[:0], list...))
		default:
			d.fail("expecting ',' or ']'")
			return nil
		}
	}
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? like Python's
// scanner: the longest match, whatever follows is the caller's problem.
func (d *decoder) number() value.Value {
	start := d.pos
	t := d.text
	i := d.pos
	if t[i] == '-' {
		i++
	}
	digitsStart := i
	switch {
	case i < len(t) && t[i] == '0':
		i++
	case i < len(t) && t[i] >= '1' && t[i] <= '9':
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
	default:
		d.pos = start
		d.fail("expecting value")
		return nil
	}
	intEnd := i
	isFloat := false
	if i+1 < len(t) && t[i] == '.' && isDigit(t[i+1]) {
		isFloat = true
		i += 2
		for i < len(t) && isDigit(t[i]) {
			i++
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			j++
		}
		if j < len(t) && isDigit(t[j]) {
			isFloat = true
			for j < len(t) && isDigit(t[j]) {
				j++
			}
			i = j
		}
	}
	d.pos = i
	lit := t[start:i]
	if isFloat {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !math.IsInf(f, 0) {
			d.fail("bad number") // unreachable for the grammar above
			return nil
		}
		if math.IsInf(f, 0) {
			d.nonFinite = true
			return nil
		}
		return d.arena.Float(f)
	}
	if intEnd-digitsStart > MaxIntDigits {
		d.pos = start
		d.fail("integer has too many digits")
		return nil
	}
	if intEnd-digitsStart <= 18 {
		n, _ := strconv.ParseInt(lit, 10, 64)
		return d.arena.Int(n)
	}
	n, ok := new(big.Int).SetString(lit, 10)
	if !ok {
		d.fail("bad integer")
		return nil
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str reads a JSON string at d.pos (which holds '"'). Raw characters below
// U+0020 are refused (Python's strict mode); everything else, DEL and the
// C1 controls included, is taken as is. ok is false after an error. A
// string without escapes is a substring of the text (no copy).
func (d *decoder) str() (s string, ok bool) {
	t := d.text
	i := d.pos + 1
	// Fast path: no escapes, ASCII printable or valid UTF-8.
	for {
		if i = SkipRawASCII(t, i); i >= len(t) {
			break
		}
		c := t[i]
		if c == '"' {
			s := t[d.pos+1 : i]
			d.pos = i + 1
			return s, true
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf { // DEL
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(t[i:])
		if r == utf8.RuneError && size <= 1 {
			d.pos = i
			d.fail("invalid UTF-8")
			return "", false
		}
		i += size
	}
	buf := make([]byte, 0, i-d.pos+16)
	buf = append(buf, t[d.pos+1:i]...)
	for {
		if i >= len(t) {
			d.pos = i
			d.fail("unterminated string")
			return "", false
		}
		c := t[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(buf), true
		case c < 0x20:
			d.pos = i
			d.fail("invalid control character in string")
			return "", false
		case c == '\\':
			if i+1 >= len(t) {
				d.pos = i
				d.fail("unterminated string")
				return "", false
			}
			e := t[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(t, i)
				if !ok {
					d.pos = i - 2
					d.fail("invalid \\u escape")
					return "", false
				}
				i += 4
				if r >= 0xd800 && r < 0xdc00 {
					// A high surrogate must be followed by an escaped low one.
					lo, ok := rune(0), false
					if i+1 < len(t) && t[i] == '\\' && t[i+1] == 'u' {
						lo, ok = hex4(t, i+2)
					}
					if !ok || lo < 0xdc00 || lo > 0xdfff {
						d.pos = i - 6
						d.fail("lone surrogate escape")
						return "", false
					}
					i += 6
					r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				} else if r >= 0xdc00 && r <= 0xdfff {
					d.pos = i - 6
					d.fail("lone surrogate escape")
					return "", false
				}
				buf = utf8.AppendRune(buf, r)
			default:
				d.pos = i - 2
				d.fail("invalid escape")
				return "", false
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(t[i:])
			if r == utf8.RuneError && size <= 1 {
				d.pos = i
				d.fail("invalid UTF-8")
				return "", false
			}
			buf = append(buf, t[i:i+size]...)
			i += size
		}
	}
}

// hex4 reads four hex digits (either case) at t[i:].
func hex4(t string, i int) (rune, bool) {
	if i+4 > len(t) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(t[i : i+4]) {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
