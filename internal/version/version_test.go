package version

import "testing"

func TestChoose(t *testing.T) {
	for _, c := range []struct{ stamp, module, want string }{
		{"", "", Fallback},
		{"", "(devel)", Fallback},
		{"", "v0.2.0", "0.2.0"},
		{"", "v0.1.1-0.20261130173000-e4dcb55abcde", "0.1.1-0.20261130173000-e4dcb55abcde"},
		{"1.2.3", "v0.2.0", "1.2.3"},
		{"v1.2.3", "(devel)", "1.2.3"},
	} {
		if got := choose(c.stamp, c.module); got != c.want {
			t.Errorf("choose(%q, %q) = %q, want %q", c.stamp, c.module, got, c.want)
		}
	}
}

// A test binary has no module version and no stamp: the fallback.
func TestStringInTests(t *testing.T) {
	if got := String(); got != Fallback {
		t.Fatalf("String() = %q, want %q", got, Fallback)
	}
}
