package yamlsubset_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
)

// TestSplitTakesAsidesAtAnyIndent: a blank line or a comment at an odd
// indent (`   # note`, a line of one space), which Parse leaves out as it
// leaves out one at an even indent, is taken by the split of the other
// commands (SplitItems and ScanItems) as read's transcoder takes it,
// wherever it stands: above the document, after the items line, inside
// an entry, between entries; ScanItems's reduced text is SplitItems's
// less the entries keep does not want (lessUnwanted).
func TestSplitTakesAsidesAtAnyIndent(t *testing.T) {
	base := "schema_version: 1\nsources: {}\nitems:\n  a:\n    x: 1\n  b:\n    x: 2\nlast_run: {}\n"
	places := []string{"schema_version:", "  a:", "    x: 1", "  b:"}
	none := func(string, string) bool { return false }
	for _, aside := range []string{" # c", "   # c", "     #", " ", "   ", " \t"} {
		for _, at := range places {
			text := strings.Replace(base, at, aside+"\n"+at, 1)
			if _, ok := yamlsubset.ReadJSON(strings.NewReader(text), int64(len(text)), int64(len(text)), engineRules); !ok {
				t.Fatalf("%q: read's transcoder declines it", text)
			}
			reduced, _, ok := yamlsubset.SplitItems(text, engineRules, none)
			if !ok {
				t.Errorf("%q: SplitItems declines it", text)
				continue
			}
			got, ok := yamlsubset.ScanItems(bytes.NewReader([]byte(text)), int64(len(text)), engineRules, none)
			if want := lessUnwanted(t, reduced, none); !ok || got != want {
				t.Errorf("%q: ScanItems ok %v, %q; want %q", text, ok, got, want)
			}
		}
	}
}
