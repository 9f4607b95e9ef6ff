package archivepath

import "testing"

func TestUnsafe(t *testing.T) {
	for _, name := range []string{"a/b", "a/", "stateguard-1.0.0.data/scripts/x", "a..b/c"} {
		if why := Unsafe(name); why != "" {
			t.Errorf("%q refused: %s", name, why)
		}
	}
	for _, name := range []string{"", "/etc/x", "../x", "a/../../x", `a\..\x`, "C:x", "a//b", "./a", "a/./b", ".."} {
		if Unsafe(name) == "" {
			t.Errorf("%q accepted", name)
		}
	}
}
