package cli

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// object is a JSON object under construction; encode sorts its keys, as
// the reference's json.dumps(sort_keys=True) does.
type object map[string]any

// encodeLine writes v as one compact JSON line: keys sorted by code point,
// "," and ":" separators, floats as Python's repr, a trailing newline.
// Supported values: nil, bool, int, int64, float64, string, *float64,
// *string, object, []object.
func encodeLine(v any) []byte {
	var b strings.Builder
	encodeValue(&b, v)
	b.WriteByte('\n')
	return []byte(b.String())
}

func encodeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(pyFloat(x))
	case *float64:
		if x == nil {
			b.WriteString("null")
		} else {
			b.WriteString(pyFloat(*x))
		}
	case string:
		encodeString(b, x)
	case *string:
		if x == nil {
			b.WriteString("null")
		} else {
			encodeString(b, *x)
		}
	case object:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Go compares strings bytewise, which for UTF-8 equals Python's
		// code point order.
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, k)
			b.WriteByte(':')
			encodeValue(b, x[k])
		}
		b.WriteByte('}')
	case []object:
		b.WriteByte('[')
		for i, o := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeValue(b, o)
		}
		b.WriteByte(']')
	default:
		// A programming error, never user input: the caller recovers it
		// into InternalError.
		panic(fmt.Sprintf("cli: cannot encode %T", v))
	}
}

// encodeString writes s the way json.dumps does with its default
// ensure_ascii=True: short escapes for the usual controls, \u00XX for the
// others, \uXXXX (surrogate pairs above U+FFFF) for everything non-ASCII.
func encodeString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		default:
			units := []rune{r}
			if r > 0xffff {
				r -= 0x10000
				units = []rune{0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff}
			}
			for _, u := range units {
				b.WriteString(`\u`)
				b.WriteByte(hex[(u>>12)&0xf])
				b.WriteByte(hex[(u>>8)&0xf])
				b.WriteByte(hex[(u>>4)&0xf])
				b.WriteByte(hex[u&0xf])
			}
		}
	}
	b.WriteByte('"')
}

// pyFloat formats a finite float as Python's repr does: the shortest digits
// that round-trip, positional notation when the decimal exponent is in
// [-4, 16), scientific notation ("1e+16", "1e-05") otherwise, and ".0" on
// integral positional values ("900.0").
func pyFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// json.dumps would write NaN/Infinity; the ledger never stores them.
		panic("cli: non-finite float")
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±XX
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		out := digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		expSign := "+"
		if exp < 0 {
			expSign = "-"
			exp = -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, out, expSign, exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	intLen := exp + 1
	if len(digits) <= intLen {
		return sign + digits + strings.Repeat("0", intLen-len(digits)) + ".0"
	}
	return sign + digits[:intLen] + "." + digits[intLen:]
}
