package sweepcore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestUnreadableNowIsRefused: a Now the staleness check cannot read is a
// broken command for every command that stamps the lease with it
// (ERROR of the fault InvalidCommand, a fixed reason naming the field),
// and nothing is created or written: stamped, it would hold the lease
// against every other writer for good. An empty Now (the clock) and a
// readable one are accepted.
func TestUnreadableNowIsRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "state.yml")
	for _, cmd := range []Command{
		LeaseAcquire{Writer: "w1", Now: "garbage"},
		UpsertItem{Source: "s", ID: "1", JSON: "{}", Writer: "w1", Now: "2026-13-45T00:00:00Z"},
		CursorAdvance{Source: "s", To: "2", PastItem: "1", Writer: "w1", Now: "12:00"},
	} {
		res := fixedEngine().run(p, cmd)
		if res.Word != WordError || res.Fault != InvalidCommand {
			t.Fatalf("%T with an unreadable Now: %s %v", cmd, res.Word, res.Err)
		}
		if field, _, _ := stampedNow(cmd); res.Reason != field+": invalid time value" {
			t.Errorf("%T: reason %q, want %q", cmd, res.Reason, field+": invalid time value")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused command made something: %v", err)
	}
	for _, now := range []string{"", "2026-07-02T12:00:00Z", "2026-07-02 12:00:00+05:30"} {
		if res := fixedEngine().run(p, LeaseAcquire{Writer: "w1", Now: now}); res.Word != WordOK {
			t.Errorf("Now %q: %s %s", now, res.Word, res.Reason)
		}
	}
}
