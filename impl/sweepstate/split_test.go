package sweepstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/benchseed"
	"github.com/stateguard/stateguard/internal/sweepfast"
)

// TestLoadForSplitsTheEngineText: on a file in the engine's own form, each
// command of the fast path parses only the items it touches and leaves
// the others for the write (so FuzzSplitItems compares something); with
// the fast path off, or on a file the engine did not write, it parses the
// whole file; a file in the Python engine's forms keeps the items that
// hold them and splits the others.
func TestLoadForSplitsTheEngineText(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.yml")
	text := benchseed.SweepState(5)
	if err := os.WriteFile(state, text, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd         Command
		parsed, off int
	}{
		{UpsertItem{Source: "slack:C42", ID: "1719900000.000002", Writer: "w1", JSON: "{}"}, 1, 4},
		{UpsertItem{Source: "slack:C42", ID: "new", Writer: "w1", JSON: "{}"}, 0, 5},
		{CursorAdvance{Source: "slack:C42", PastItem: "1719900000.000004", To: "9"}, 1, 4},
		{Validate{}, 0, 5},
		{LeaseAcquire{Writer: "w1"}, 0, 5},
		{CursorGet{Source: "slack:C42"}, 0, 5},
		{Read{}, 5, -1},
		{ImportLegacy{}, 5, -1},
	} {
		st, others, failed := loadFor(state, c.cmd, false)
		if failed != nil {
			t.Fatalf("%T: %s", c.cmd, failed.Reason)
		}
		if n := mapAt(st.doc, "items").Len(); n != c.parsed || others.Len() != max(c.off, 0) || st.partial {
			t.Errorf("%T: %d items parsed, %d split off, partial %v; want %d and %d, not partial", c.cmd, n, others.Len(), st.partial, c.parsed, max(c.off, 0))
		}
		// Streamed, cursor-get and validate keep nothing of the items
		// they leave out; the others load as without streaming.
		st, others, failed = loadFor(state, c.cmd, true)
		if failed != nil {
			t.Fatalf("%T streamed: %s", c.cmd, failed.Reason)
		}
		wantPartial, wantOff := streams(c.cmd), max(c.off, 0)
		if wantPartial {
			wantOff = 0
		}
		if n := mapAt(st.doc, "items").Len(); n != c.parsed || others.Len() != wantOff || st.partial != wantPartial {
			t.Errorf("%T streamed: %d items parsed, %d split off, partial %v; want %d, %d, %v", c.cmd, n, others.Len(), st.partial, c.parsed, wantOff, wantPartial)
		}
	}
	sweepfast.SetOff(true)
	st, others, _ := loadFor(state, LeaseAcquire{Writer: "w1"}, true)
	sweepfast.SetOff(false)
	if mapAt(st.doc, "items").Len() != 5 || others != nil {
		t.Errorf("fast path off: %d items parsed, %d split off; want the whole file", mapAt(st.doc, "items").Len(), others.Len())
	}
	// The Python engine's form of item 2 (a bare YAML 1.1 word as a key):
	// it stays in the document, the other items are left out as before.
	python := strings.Replace(string(text), "    id: \"1719900000.000002\"\n", "    N: 1\n    id: \"1719900000.000002\"\n", 1)
	if err := os.WriteFile(state, []byte(python), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd          Command
		streamed     bool
		parsed, off  int
		wantsPartial bool
	}{
		{UpsertItem{Source: "slack:C42", ID: "1719900000.000001", Writer: "w1", JSON: "{}"}, true, 2, 3, false},
		{LeaseAcquire{Writer: "w1"}, true, 1, 4, false},
		{CursorGet{Source: "slack:C42"}, true, 1, 0, true},
		{Validate{}, false, 1, 4, false},
	} {
		st, others, failed := loadFor(state, c.cmd, c.streamed)
		if failed != nil {
			t.Fatalf("python form, %T: %s", c.cmd, failed.Reason)
		}
		if n := mapAt(st.doc, "items").Len(); n != c.parsed || others.Len() != c.off || st.partial != c.wantsPartial {
			t.Errorf("python form, %T: %d items parsed, %d split off, partial %v; want %d, %d, %v", c.cmd, n, others.Len(), st.partial, c.parsed, c.off, c.wantsPartial)
		}
	}
	if err := os.WriteFile(state, append(text, "# a hand edit\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []Command{LeaseAcquire{Writer: "w1"}, CursorGet{Source: "slack:C42"}} {
		if st, others, _ := loadFor(state, cmd, true); mapAt(st.doc, "items").Len() != 5 || others != nil || st.partial {
			t.Errorf("hand-edited file, %T: %d items parsed, %d split off, partial %v; want the whole file", cmd, mapAt(st.doc, "items").Len(), others.Len(), st.partial)
		}
	}
}
