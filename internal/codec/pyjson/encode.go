package pyjson

import (
	"io"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stateguard/stateguard/model/value"
)

// Encode writes v as Python's json.dumps does with its defaults:
// ensure_ascii (non-ASCII and DEL as \uXXXX in lowercase hex, surrogate pairs
// above U+FFFF), ", " and ": " separators, keys in map order, floats as
// FormatFloat.
func Encode(v value.Value) []byte {
	return AppendEncode(nil, v)
}

// AppendEncode appends the json.dumps text of v to dst. A value of a type
// outside package value's list is written as null (it cannot occur in a
// decoded document).
func AppendEncode(dst []byte, v value.Value) []byte {
	e := encoder{buf: dst}
	e.value(v)
	return e.buf
}

// EncodeTo writes the json.dumps text of v to w in chunks, so a large
// document is never held as one byte slice.
func EncodeTo(w io.Writer, v value.Value) error {
	e := encoder{buf: make([]byte, 0, flushSize+flushSize/4), w: w}
	e.value(v)
	e.flush()
	return e.err
}

// flushSize is how much EncodeTo gathers before it writes.
const flushSize = 32 << 10

// encoder appends to buf; with a writer it hands buf over whenever it has
// grown past flushSize (between container elements).
type encoder struct {
	buf []byte
	w   io.Writer // nil: keep everything in buf
	err error
}

func (e *encoder) flush() {
	if e.err == nil {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) maybeFlush() {
	if e.w != nil && len(e.buf) >= flushSize {
		e.flush()
	}
}

func (e *encoder) value(v value.Value) {
	switch t := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		if t {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case *big.Int:
		if t.IsInt64() {
			e.buf = strconv.AppendInt(e.buf, t.Int64(), 10)
		} else {
			e.buf = t.Append(e.buf, 10)
		}
	case float64:
		e.buf = AppendFloat(e.buf, t)
	case string:
		e.buf = appendASCIIString(e.buf, t)
	case []value.Value:
		e.buf = append(e.buf, '[')
		for i, x := range t {
			if i > 0 {
				e.buf = append(e.buf, ", "...)
			}
			e.value(x)
			e.maybeFlush()
		}
		e.buf = append(e.buf, ']')
	case *value.Map:
		e.buf = append(e.buf, '{')
		for i := range t.Len() {
			k, x := t.At(i)
			if i > 0 {
				e.buf = append(e.buf, ", "...)
			}
			e.buf = appendASCIIString(e.buf, k)
			e.buf = append(e.buf, ": "...)
			e.value(x)
			e.maybeFlush()
		}
		e.buf = append(e.buf, '}')
	default:
		e.buf = append(e.buf, "null"...)
	}
}

const hexDigits = "0123456789abcdef"

// AppendASCIIString appends s as json.dumps writes a string with its default
// ensure_ascii=True: quoted, short escapes for the usual controls, \uXXXX
// (lowercase, surrogate pairs above U+FFFF) for every other character
// outside U+0020..U+007E.
func AppendASCIIString(dst []byte, s string) []byte { return appendASCIIString(dst, s) }

// appendASCIIString writes s with ensure_ascii: everything outside
// U+0020..U+007E escaped, astral characters as surrogate pairs.
func appendASCIIString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; ; {
		if i = SkipRawASCII(s, i); i >= len(s) {
			break
		}
		c := s[i]
		dst = append(dst, s[start:i]...)
		if c < utf8.RuneSelf {
			dst = appendShortEscape(dst, rune(c))
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			// An invalid byte decodes as U+FFFD with size 1: written as \ufffd.
			if r >= 0x10000 {
				r1 := 0xd800 + (r-0x10000)>>10
				r2 := 0xdc00 + (r-0x10000)&0x3ff
				dst = appendU4(dst, r1)
				dst = appendU4(dst, r2)
			} else {
				dst = appendU4(dst, r)
			}
			i += size
		}
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// rawASCII marks the bytes ensure_ascii writes as they are: U+0020..U+007E
// but '"' and '\\' (one table load per byte).
var rawASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendShortEscape escapes an ASCII character the way json.dumps does:
// short forms for " \ \n \r \t \b \f, \u00XX for the rest.
func appendShortEscape(dst []byte, c rune) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return appendU4(dst, c)
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u',
		hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// AppendEscapedRune appends the \uXXXX (lowercase hex) or short escape of an
// ASCII or BMP character; the YAML-subset writer shares it so both codecs
// spell escapes identically.
func AppendEscapedRune(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		return appendShortEscape(dst, r)
	}
	return appendU4(dst, r)
}

// FormatFloat returns Python's repr of f: the shortest digits that read back
// as f, in exponent form only when the decimal exponent is below -4 or at
// least 16, and ".0" on integral values ("1.0", "1e+16", "1e-05", "-0.0",
// "123456789.0"). f must be finite; NaN and the
// infinities, which a value never holds, come out as Python writes them in
// json.dumps ("NaN", "Infinity", "-Infinity").
func FormatFloat(f float64) string {
	return string(AppendFloat(make([]byte, 0, 24), f))
}

// AppendFloat appends FormatFloat(f) to dst.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	// Shortest round-trip digits in exponent form first: it tells the
	// decimal exponent, which decides the layout the way Python's repr does.
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	exp := decimalExponent(dst[start:])
	if exp < -4 || exp >= 16 {
		return dst // Go's 'e' form already matches Python: "1e+16", "1e-05"
	}
	dst = strconv.AppendFloat(dst[:start], f, 'f', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

// decimalExponent reads the exponent of strconv's 'e' form ("d.ddde±XX").
func decimalExponent(b []byte) int {
	i := len(b) - 1
	for b[i] != 'e' {
		i--
	}
	n, _ := strconv.Atoi(string(b[i+1:]))
	return n
}

// SkipRawASCII returns the first index j >= i at which s holds a byte that
// a JSON string cannot carry as it is: a control character, '"', '\\',
// DEL or any non-ASCII byte (len(s) if there is none). Both codecs step
// over plain runs with it: sixteen bytes a step where there is assembly
// for it (skipPlain), then eight; the byte it stops at is found in its
// block.
func SkipRawASCII(s string, i int) int {
	if i >= 0 && i+32 <= len(s) {
		n, stopped := skipPlain(s[i:])
		if i += n; stopped {
			return i
		}
	}
	return skipRawASCIIWords(s, i)
}

// skipRawASCIIWords is SkipRawASCII eight bytes a step.
func skipRawASCIIWords(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8] // constant indexes below: one load, no bounds checks
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if m := stops(w); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && rawASCII[s[i]] {
		i++
	}
	return i
}

// RawStringEnd returns j, the index of the first '"' in s from i on, when
// every byte before it from i is one SkipRawASCII steps over (so that
// SkipRawASCII(s, i) is j), and -1 otherwise: the end of a JSON string
// without escapes whose text from i is the same in both forms. The quote
// is found by strings.IndexByte and the bytes before it are judged
// sixteen at a time without a branch, which costs a long string of the
// usual kind less than SkipRawASCII's test of every word; where skipPlain
// has assembly, a string of 32 bytes or more is judged by it first.
func RawStringEnd(s string, i int) int {
	if i >= 0 && i+32 <= len(s) {
		n, stopped := skipPlain(s[i:])
		if i += n; stopped {
			if s[i] != '"' {
				return -1
			}
			return i
		}
	}
	n := strings.IndexByte(s[i:], '"')
	if n < 0 {
		return -1
	}
	j := i + n
	ok := ^uint64(0)
	for ; i+16 <= j; i += 16 {
		b := s[i : i+16] // constant indexes below: two loads, no bounds checks
		ok &= plain(uint64(b[0])|uint64(b[1])<<8|uint64(b[2])<<16|uint64(b[3])<<24|
			uint64(b[4])<<32|uint64(b[5])<<40|uint64(b[6])<<48|uint64(b[7])<<56) &
			plain(uint64(b[8])|uint64(b[9])<<8|uint64(b[10])<<16|uint64(b[11])<<24|
				uint64(b[12])<<32|uint64(b[13])<<40|uint64(b[14])<<48|uint64(b[15])<<56)
	}
	if i+8 <= j {
		ok &= plain(word(s, i))
		i += 8
	}
	switch {
	case i == j:
	case i+8 <= len(s):
		// The last bytes, with plain ones ('A') in place of those
		// after the span.
		m := uint64(1)<<(8*(j-i)) - 1
		ok &= plain(word(s, i)&m | 'A'*ones&^m)
	default:
		for ; i < j; i++ {
			if !rawASCII[s[i]] {
				return -1
			}
		}
	}
	if ok&highs != highs {
		return -1
	}
	return j
}

// word is the eight bytes of s from i as one little-endian word.
func word(s string, i int) uint64 {
	b := s[i : i+8] // constant indexes below: one load, no bounds checks
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// plain has the high bit of each byte of w set (its other bits are of no
// use) where the byte is neither below 0x20, DEL or above, nor '\\', and
// clear for the first byte that is (a byte from 0x80 up clears its own
// bit: b + 1 keeps the bit up to 0xfe, b + 0x60 drops it from 0xa0 up;
// only the bytes above it may see its carry). So a word of plain bytes
// has all of highs set; '"' is not judged.
func plain(w uint64) uint64 {
	return (w + 0x60*ones) &^ (w + ones) & ((w ^ '\\'*ones) + 0x7f*ones)
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// stops has the high bit set (within highs) of the first byte of w that a
// JSON string cannot carry as it is (below 0x20, '"', '\\', DEL or above)
// and of no byte below it. Each byte b below 0x80 is judged on its own,
// since a constant added to it stays below 0x100 (b + 0x60 reaches 0x80
// when b >= 0x20, b + 1 when b is 0x7f, (b ^ c) + 0x7f unless b is c); a
// byte from 0x80 up is a stop itself, and only the bytes above it can see
// its carry.
func stops(w uint64) uint64 {
	plain := (w + 0x60*ones) &^ (w + ones) &^ w
	plain &= ((w ^ '"'*ones) + 0x7f*ones) & ((w ^ '\\'*ones) + 0x7f*ones)
	return ^plain & highs
}
