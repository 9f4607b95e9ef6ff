//go:build linux || darwin

package ledger

import (
	"os"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// TestReadOnlyLogTruncatedWhileViewLoads: a writer truncates its fully
// checkpointed -wal (wal_checkpoint(TRUNCATE), which no read lock of the
// view holds off) between the view's stat of the -wal and its reading of
// the frames. That is the files changing under the read, to be retried
// (12.4, 12.5), not an internal error.
func TestReadOnlyLogTruncatedWhileViewLoads(t *testing.T) {
	p, _, keeper := livePair(t)
	if _, err := keeper.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		t.Fatal(err)
	}
	pauses := recordPauses(t)
	calls := 0
	storageguard.Hooks.ViewLoading = func(string) {
		calls++
		if calls != 1 {
			return
		}
		var busy, logged, done int
		if err := keeper.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done); err != nil || busy != 0 {
			t.Fatal(busy, err)
		}
		if st, err := os.Stat(p + "-wal"); err != nil || st.Size() != 0 {
			t.Fatalf("-wal not truncated: %v %v", st, err)
		}
	}
	t.Cleanup(func() { storageguard.Hooks.ViewLoading = nil })
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	defer r.Close()
	if rep, err := r.Doctor(); err != nil || !rep.Healthy || rep.TaskCount != 2 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
	if calls < 2 || len(*pauses) != 1 {
		t.Fatalf("%d loads, pauses %v", calls, *pauses)
	}
}
