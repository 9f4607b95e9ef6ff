package yamlsubset

import (
	"strings"
	"testing"
)

// TestBareColon: bareColon finds the colon exactly when the text before
// the first colon is a bare word, as isBareWord says.
func TestBareColon(t *testing.T) {
	for _, s := range []string{"a: 1", "a:", "ab.c-d_9: x", "_: 1", ":", "9a: 1", "-a: 1", "a b: 1", "a", "", "é: 1", "a\": 1", "Yes: 1", "a:b: c", "a.:", "\"a\": 1"} {
		want := -1
		if i := strings.IndexByte(s, ':'); i >= 0 && isBareWord(s[:i]) {
			want = i
		}
		if got := bareColon(s); got != want {
			t.Errorf("bareColon(%q) = %d, want %d", s, got, want)
		}
	}
}
