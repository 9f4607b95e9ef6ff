package sweepstate

import (
	"slices"
	"testing"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
)

// TestConstantsAreTheCores: the words, statuses and the size cap this
// package declares for its readers are the ones the core decides with
// (they are written out here so that go doc shows them).
func TestConstantsAreTheCores(t *testing.T) {
	words := map[Word]sweepcore.Word{
		WordOK: sweepcore.WordOK, WordNoState: sweepcore.WordNoState, WordCorrupt: sweepcore.WordCorrupt,
		WordLocked: sweepcore.WordLocked, WordStaleReclaimed: sweepcore.WordStaleReclaimed,
		WordLeaseLost: sweepcore.WordLeaseLost, WordRefused: sweepcore.WordRefused, WordError: sweepcore.WordError,
	}
	if len(words) != 8 {
		t.Fatalf("%d distinct words, want 8", len(words))
	}
	for w, core := range words {
		if string(w) != string(core) {
			t.Errorf("word %q is %q in the core", w, core)
		}
	}
	if !slices.Equal(ItemStatuses, sweepcore.ItemStatuses) || StatusOther != sweepcore.StatusOther {
		t.Errorf("statuses %q and %q; the core's %q and %q", ItemStatuses, StatusOther, sweepcore.ItemStatuses, sweepcore.StatusOther)
	}
	if MaxFileSize != sweepcore.MaxFileSize {
		t.Errorf("MaxFileSize %d, the core's %d", MaxFileSize, sweepcore.MaxFileSize)
	}
}
