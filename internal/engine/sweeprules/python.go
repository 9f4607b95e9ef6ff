package sweeprules

import (
	"math/big"
	"strings"
	"unicode"
)

// isIntSpace is what int() skips around a number: str.isspace without the
// separators U+001C..U+001F. CPython maps non-ASCII whitespace to a space
// and leaves ASCII as it is for a C parser that knows only the six ASCII
// spaces; that set is exactly Go's unicode.IsSpace.
func isIntSpace(r rune) bool { return unicode.IsSpace(r) }

// DigitValue returns the value of a Unicode decimal digit (category Nd).
// Every Nd block is a contiguous run of ten starting at zero.
func DigitValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if !unicode.IsDigit(r) {
		return 0, false
	}
	start := r
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(r-start) % 10, true
}

// PythonInt is Python's int(s) for text: surrounding whitespace, an optional
// sign, decimal digits of any script, single underscores between
// digits.
func PythonInt(s string) (*big.Int, bool) {
	s = strings.TrimFunc(s, isIntSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return nil, false
	}
	var b strings.Builder
	prevDigit := false
	for _, r := range s {
		if r == '_' {
			if !prevDigit {
				return nil, false
			}
			prevDigit = false
			continue
		}
		d, ok := DigitValue(r)
		if !ok {
			return nil, false
		}
		b.WriteByte(byte('0' + d))
		prevDigit = true
	}
	if !prevDigit {
		return nil, false // trailing underscore
	}
	if b.Len() > maxIntDigits {
		return nil, false // Python 3.11 refuses to convert longer text
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	if !ok {
		return nil, false
	}
	if neg {
		n.Neg(n)
	}
	return n, true
}

// maxIntDigits is Python 3.11's default limit on the digits int() converts
// from text (sys.get_int_max_str_digits()).
const maxIntDigits = 4300
