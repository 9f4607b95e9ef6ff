package ledgercli

import (
	"math"
	"strconv"
)

// parseSeconds reads a number of seconds from the command line.
//
// It accepts what Python's float() accepts for plain decimal text (optional
// surrounding ASCII whitespace, an optional sign, digits with an optional
// fraction, an optional exponent), because the reference CLI parses numbers
// with float(). Divergence L3 narrows that: underscores, non-ASCII digits and
// any other non-ASCII text are refused. NaN and infinities (including a
// finite-looking literal that overflows, such as 1e309) are refused, and so
// are negative values. A negative zero ("-0", or "-1e-400", which underflows)
// is zero and is returned as +0.0, as the reference stores it.
func parseSeconds(text string) (float64, bool) {
	s := trimASCIISpace(text)
	if !isPlainDecimal(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if f < 0 {
		return 0, false
	}
	if f == 0 {
		return 0, true // drops the sign of -0.0
	}
	return f, true
}

// trimASCIISpace strips the ASCII whitespace Python's float() strips.
func trimASCIISpace(s string) string {
	isSpace := func(b byte) bool {
		switch b {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			return true
		}
		return false
	}
	start, end := 0, len(s)
	for start < end && isSpace(s[start]) {
		start++
	}
	for end > start && isSpace(s[end-1]) {
		end--
	}
	return s[start:end]
}

// isPlainDecimal matches [+-]? (d+ (. d*)? | . d+) ([eE] [+-]? d+)? over
// ASCII digits only.
func isPlainDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intDigits := countDigits(s[i:])
	i += intDigits
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		fracDigits = countDigits(s[i:])
		i += fracDigits
	}
	if intDigits == 0 && fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		expDigits := countDigits(s[i:])
		if expDigits == 0 {
			return false
		}
		i += expDigits
	}
	return i == len(s)
}

func countDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
