package sweepcore

import (
	"math"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/model/value"
)

// This file holds the few Python value rules the reference engine leans on:
// truthiness, int() and str(). They are written from the Python language
// reference, not copied.

// truthy is Python's bool(v): null, false, zero, empty text, empty list and
// empty map are false; NaN (not representable here anyway) would be true.
func truthy(v value.Value) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case *big.Int:
		return t.Sign() != 0
	case float64:
		return t != 0
	case string:
		return t != ""
	case []value.Value:
		return len(t) > 0
	case *value.Map:
		return t.Len() > 0
	}
	return true
}

// isPySpace is str.isspace for one code point: Go's unicode.IsSpace plus
// the information separators U+001C..U+001F that Python also counts.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyInt is Python's int(v) for the values a state file can hold; false where
// Python raises.
func pyInt(v value.Value) (*big.Int, bool) {
	switch t := v.(type) {
	case bool:
		if t {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case *big.Int:
		return new(big.Int).Set(t), true
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, false
		}
		n, _ := big.NewFloat(math.Trunc(t)).Int(nil)
		return n, true
	case string:
		return sweeprules.PythonInt(t)
	}
	return nil, false
}

// pyStr is Python's str(v).
func pyStr(v value.Value) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v).
func pyRepr(v value.Value) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case bool:
		if t {
			return "True"
		}
		return "False"
	case *big.Int:
		return t.String()
	case float64:
		return pyjson.FormatFloat(t)
	case string:
		return reprString(t)
	case []value.Value:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *value.Map:
		parts := make([]string, 0, t.Len())
		for _, k := range t.Keys() {
			e, _ := t.Get(k)
			parts = append(parts, reprString(k)+": "+pyRepr(e))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}

// reprString is repr() of a str: single quotes unless only the double quote
// avoids escaping; non-printable code points escaped.
func reprString(s string) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteRune(quote)
	const hex = "0123456789abcdef"
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&15])
		case r < 0x7f || unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&15])
		case r <= 0xffff:
			b.WriteString(`\u`)
			for sh := 12; sh >= 0; sh -= 4 {
				b.WriteByte(hex[(r>>sh)&15])
			}
		default:
			b.WriteString(`\U`)
			for sh := 28; sh >= 0; sh -= 4 {
				b.WriteByte(hex[(r>>sh)&15])
			}
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// decimalDigits returns the digit values of s when s is one or more Unicode
// decimal digits (Python's str.isdigit restricted to what int() accepts:
// a superscript ² makes s text, where the reference raises, D11).
func decimalDigits(s string) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	out := make([]int, 0, utf8.RuneCountInString(s))
	for _, r := range s {
		d, ok := sweeprules.DigitValue(r)
		if !ok {
			return nil, false
		}
		out = append(out, d)
	}
	return out, true
}

// cursorLess reports whether cursor a sorts before b (spec/sweep-state.md §9.3):
// two all-digit cursors compare as integers, anything else by code point
// (UTF-8 byte order is code point order).
func cursorLess(a, b string) bool {
	da, okA := decimalDigits(a)
	db, okB := decimalDigits(b)
	if !okA || !okB {
		return a < b
	}
	da, db = trimLeadingZeros(da), trimLeadingZeros(db)
	if len(da) != len(db) {
		return len(da) < len(db)
	}
	for i := range da {
		if da[i] != db[i] {
			return da[i] < db[i]
		}
	}
	return false
}

func trimLeadingZeros(d []int) []int {
	for len(d) > 1 && d[0] == 0 {
		d = d[1:]
	}
	return d
}
