package sweeprules

import (
	"strings"
	"testing"
)

func TestPythonInt(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"30", 30, true}, {" 30\n", 30, true}, {"+7", 7, true}, {"-7", -7, true},
		{"1_000", 1000, true}, {"\u0663\u0660", 30, true}, {"\u00a012", 12, true},
		// int() skips ASCII whitespace and non-ASCII str.isspace characters,
		// but not the separators U+001C..U+001F (CPython 3.11.7 raises).
		{"\x1f5", 0, false}, {"5\x1c", 0, false}, {"\x1c5\u00a0", 0, false}, {"\v\f5\u3000", 5, true},
		{"1__0", 0, false}, {"_1", 0, false}, {"1_", 0, false}, {"1.5", 0, false},
		{"", 0, false}, {"abc", 0, false}, {"0x10", 0, false}, {"- 1", 0, false},
		{strings.Repeat("1", 4300), 0, true}, {strings.Repeat("1", 4301), 0, false}, // Python 3.11's digit limit
	}
	for _, c := range cases {
		got, ok := PythonInt(c.in)
		if ok != c.ok || (ok && got.IsInt64() && got.Int64() != c.want) {
			t.Errorf("PythonInt(%q) = %v, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
