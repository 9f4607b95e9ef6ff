package storageguard

import (
	"os"
	"testing"
)

// TestSplitLast: the split at the last separator keeps the root's own
// separator and cleans nothing.
func TestSplitLast(t *testing.T) {
	if os.PathSeparator == '\\' {
		t.Skip("POSIX separators")
	}
	for _, c := range [][3]string{
		{"/x", "/", "x"}, {"/", "/", ""}, {"/a/b", "/a", "b"}, {"/a/", "/a", ""},
		{"/a/..", "/a", ".."}, {"//x", "/", "x"}, {"xy", "xy", ""},
	} {
		if parent, name := splitLast(c[0]); parent != c[1] || name != c[2] {
			t.Errorf("splitLast(%q) = %q, %q; want %q, %q", c[0], parent, name, c[1], c[2])
		}
	}
}
