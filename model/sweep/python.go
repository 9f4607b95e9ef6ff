package sweep

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stateguard/stateguard/model/value"
)

// Truthy is Python's truth value of v (§4.2): null, false, zero numbers
// (including -0.0), "" and empty containers are false; everything else,
// "0" and [0] included, is true.
func Truthy(v value.Value) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case *big.Int:
		return t.Sign() != 0
	case float64:
		return t != 0 // NaN never occurs in a value, -0.0 == 0
	case string:
		return t != ""
	case []value.Value:
		return len(t) > 0
	case *value.Map:
		return t.Len() > 0
	}
	return true
}

// maxIntDigits is Python 3.11's limit on int() of a decimal string; longer
// text raises ValueError.
const maxIntDigits = 4300

// PyInt converts v like Python's int(v) (§7.6, ttl_minutes): booleans give 0
// or 1, floats truncate toward zero, strings may carry surrounding
// whitespace, a sign and single underscores between digits. ok is false
// where Python raises (null, lists, maps, other text).
// Decimal digits of every script count, as in Python.
func PyInt(v value.Value) (*big.Int, bool) {
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
		n, _ := new(big.Float).SetFloat64(math.Trunc(t)).Int(nil)
		return n, true
	case string:
		return pyIntString(t)
	}
	return nil, false
}

func pyIntString(s string) (*big.Int, bool) {
	// int() trims less than str.strip(): U+001C..U+001F stay (CPython
	// passes ASCII text to a parser that skips ASCII whitespace only).
	s = strings.TrimFunc(s, unicode.IsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' {
		return nil, false
	}
	var digits strings.Builder
	prevUnderscore := false
	for _, r := range s {
		switch d, ok := decimalDigit(r); {
		case ok:
			digits.WriteByte(byte('0' + d))
			prevUnderscore = false
		case r == '_' && !prevUnderscore:
			prevUnderscore = true
		default:
			return nil, false
		}
	}
	if digits.Len() > maxIntDigits {
		return nil, false
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	if !ok {
		return nil, false
	}
	if neg {
		n.Neg(n)
	}
	return n, true
}

// decimalDigit is the value of a Unicode decimal digit (category Nd). Every
// Nd block is a run of ten code points from zero to nine, so the value is
// the distance from the run's zero.
func decimalDigit(r rune) (int, bool) {
	if !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	zero := r
	for unicode.Is(unicode.Nd, zero-1) {
		zero--
	}
	return int(r-zero) % 10, true
}

// PyStr is Python's str(v) (§12, import-legacy ids and source names):
// None, True, False, decimal integers, float repr, and containers in
// Python's repr syntax.
func PyStr(v value.Value) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

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
		return FloatRepr(t)
	case string:
		return pyStringRepr(t)
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
			parts = append(parts, pyStringRepr(k)+": "+pyRepr(e))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}

// pyStringRepr quotes s as Python's repr does: single quotes unless s holds
// a single quote and no double quote; non-printable characters escaped.
// Printability follows Go's Unicode tables, which may lag Python's.
func pyStringRepr(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || (r < utf8.RuneSelf && r > 0x20 && r < 0x7f):
			b.WriteRune(r)
		case r < 0x100 && !pyPrintable(r):
			b.WriteString(`\x` + hex(int(r), 2))
		case !pyPrintable(r) && r < 0x10000:
			b.WriteString(`\u` + hex(int(r), 4))
		case !pyPrintable(r):
			b.WriteString(`\U` + hex(int(r), 8))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

func pyPrintable(r rune) bool {
	if r == ' ' {
		return true
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp, unicode.Zs) {
		return false
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

func hex(n, width int) string {
	s := strconv.FormatInt(int64(n), 16)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// FloatRepr is Python's repr of a float: the shortest digits that round-trip,
// an exponent only when the decimal exponent is below -4 or at least 16, and
// ".0" on integral values (§14.4).
func FloatRepr(f float64) string {
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
	// 'e' with -1 precision gives the shortest digits as d.ddde±XX.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		out := digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		es := strconv.Itoa(abs(exp))
		if len(es) < 2 {
			es = "0" + es
		}
		if exp < 0 {
			return sign + out + "e-" + es
		}
		return sign + out + "e+" + es
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
