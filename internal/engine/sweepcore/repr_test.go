package sweepcore

import "testing"

// TestReprStringEscapes: repr() of a str, each branch of reprString at its
// edges, against what CPython prints: the quote chosen, the escapes of
// the quote, the backslash, \t \n \r, the other controls and DEL as \x,
// space and ~ as they are, the non-printable code points up to U+00FF as
// \x, up to U+FFFF as \u and beyond as \U, all hex digits in lower case,
// printable non-ASCII as it is.
func TestReprStringEscapes(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `''`},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`a"b'c`, `'a"b\'c'`},
		{`back\slash`, `'back\\slash'`},
		{"\t\n\r", `'\t\n\r'`},
		{"\x00\x01\x1f \x7e\x7f", `'\x00\x01\x1f ~\x7f'`},
		{"\u0080\u0085\u009f\u00a0\u00ad\u00ff", `'\x80\x85\x9f\xa0\xadÿ'`},
		{"\u0100\u0378\u2028\ufeff\uffff", `'Ā\u0378\u2028\ufeff\uffff'`},
		{"\U00010000\U000e0001\U0010ffff", `'𐀀\U000e0001\U0010ffff'`},
		{"é😀", `'é😀'`},
	}
	for _, c := range cases {
		if got := reprString(c.in); got != c.want {
			t.Errorf("reprString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
