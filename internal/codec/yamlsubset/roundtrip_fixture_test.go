package yamlsubset_test

import (
	"fmt"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
)

// TestFixtureStatesAreFixedPoints: every state file the reference wrote
// (D6/D8 normalised) is canonical, so parsing and re-emitting it must give
// the same bytes.
func TestFixtureStatesAreFixedPoints(t *testing.T) {
	n := 0
	for name, rec := range loadRecordings(t) {
		written := rec.engineWritten()
		for i, st := range rec.Steps {
			if !written[i] {
				continue
			}
			n++
			want := *st.StateAfter
			doc, err := yamlsubset.Parse([]byte(want))
			if err != nil {
				t.Errorf("%s step %d: Parse: %v", name, i, err)
				continue
			}
			if got := string(yamlsubset.Emit(doc)); got != want {
				t.Errorf("%s step %d: re-emitted text differs\n%s", name, i, firstDiff(got, want))
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d recorded states checked", n)
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want string) string {
	gl, wl := splitLines(got), splitLines(want)
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got: %q\nwant: %q", i+1, g, w)
		}
	}
	return "(same lines, different ends)"
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
