package sweepcli

import (
	"maps"
	"strings"
	"testing"
)

// TestMergeDriverArgvAsArgparse pins how merge-driver's optional
// positionals (argparse's nargs="?") take words, as Python 3.11's argparse
// takes them: a "--" among them is dropped, and once an option has
// followed a positional, the positionals are done (argparse matches them
// all, empty, at the first run of values).
func TestMergeDriverArgvAsArgparse(t *testing.T) {
	cases := []struct {
		argv string
		want string // "O=.. A=.." in name order, or "misuse"
	}{
		{"a b c", "A=b B=c O=a"},
		{"a b c d", "A=b B=c O=a P=d"},
		{"a -- b c", "A=b B=c O=a"},
		{"-- a b c", "A=b B=c O=a"},
		{"a b c --", "A=b B=c O=a"},
		{"a b -- c", "A=b B=c O=a"},
		{"--install --", "--install=true"},
		{"--install", "--install=true"},
		{"a --install b", "misuse"},
		{"a b c d e", "misuse"},
	}
	for _, c := range cases {
		cl, err := parseCommandLine(append([]string{"merge-driver"}, strings.Fields(c.argv)...))
		got := "misuse"
		if err == nil {
			var kv []string
			for _, k := range []string{"--install", "A", "B", "O", "P"} {
				if v, ok := cl.values[k]; ok {
					kv = append(kv, k+"="+v)
				}
			}
			got = strings.Join(kv, " ")
			if len(kv) != len(cl.values) {
				t.Errorf("%q: unexpected values %v", c.argv, maps.Collect(maps.All(cl.values)))
			}
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s (err %v)", c.argv, got, c.want, err)
		}
	}
}
