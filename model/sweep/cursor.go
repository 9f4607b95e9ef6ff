package sweep

import "strings"

// CursorLess reports whether cursor a sorts strictly before cursor b (§9.3):
// when both consist only of decimal digits (of any script, as Python's
// str.isdecimal) they compare as integers (so "9" precedes "10" and "0010"
// equals "10"); otherwise as strings, code point by code point. The empty
// string is not all digits. Superscript or circled digits (²,①) are text
// here, where the reference's str.isdigit takes them and int() then raises
// (divergence D11).
func CursorLess(a, b string) bool {
	if da, ok := asciiDigits(a); ok {
		if db, ok := asciiDigits(b); ok {
			return compareDecimal(da, db) < 0
		}
	}
	// Byte order of UTF-8 is code point order.
	return a < b
}

// asciiDigits rewrites a string of decimal digits in ASCII; false when s is
// empty or holds anything else.
func asciiDigits(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	var b strings.Builder
	for _, r := range s {
		d, ok := decimalDigit(r)
		if !ok {
			return "", false
		}
		b.WriteByte(byte('0' + d))
	}
	return b.String(), true
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
