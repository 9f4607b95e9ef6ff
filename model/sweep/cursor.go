package sweep

import "strings"

// CursorLess reports whether cursor a sorts strictly before cursor b (§8):
// when both consist only of ASCII digits they compare as integers (so "9"
// precedes "10" and "0010" equals "10"); otherwise as strings, code point by
// code point. The empty string is not all digits.
func CursorLess(a, b string) bool {
	if allDigits(a) && allDigits(b) {
		return compareDecimal(a, b) < 0
	}
	// Byte order of UTF-8 is code point order.
	return a < b
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// compareDecimal compares digit strings of any length as integers.
func compareDecimal(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
