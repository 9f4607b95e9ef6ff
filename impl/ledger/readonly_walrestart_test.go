//go:build linux || darwin

package ledger

import (
	"bytes"
	"os"
	"testing"

	"github.com/stateguard/stateguard/internal/storage/walfile"
)

// TestReadOnlyNoticesLogRestartedMidRead: the one change that only the
// -wal's header shows. The log was checkpointed in full (the database
// holds every frame, the -wal still holds them); while a read runs, a
// writer commits, and since every frame was copied it starts the log again
// from its beginning (new salts) over the old frames, which the view still
// takes for pages. The view's read lock on the -shm lets the -wal grow, so
// neither the database file nor the -wal's size says so: only its header.
// The read must notice, retry and report the healthy ledger with the new
// tasks. Planted bug: the comparison of the -wal header dropped from the
// view's change check (the read then answers from torn pages).
func TestReadOnlyNoticesLogRestartedMidRead(t *testing.T) {
	withReadLocks(t, true)
	recordPauses(t)
	p, w, keeper := livePair(t)
	var busy, logged, backfilled int
	if err := keeper.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &backfilled); err != nil {
		t.Fatal(err)
	}
	if busy != 0 || logged == 0 || backfilled != logged {
		t.Fatalf("checkpoint: busy %d, %d frames logged, %d copied; want all copied", busy, logged, backfilled)
	}
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	oldWAL, _ := os.ReadFile(p + "-wal")
	oldDB, _ := os.Stat(p)
	const added = 4
	reads := onRead(t, func(n int, path string) {
		if n != 1 {
			return
		}
		for i := 0; i < added; i++ {
			if _, err := w.Create(CreateParams{}); err != nil {
				t.Fatal(err)
			}
		}
		// The state the test is about: the log restarted over the old
		// frames, no shorter than it was, the database file untouched.
		newWAL, _ := os.ReadFile(path + "-wal")
		newDB, _ := os.Stat(path)
		if len(newWAL) < len(oldWAL) || bytes.Equal(newWAL[16:24], oldWAL[16:24]) {
			t.Fatalf("the writer did not restart the log over the old frames (%d bytes, were %d)", len(newWAL), len(oldWAL))
		}
		if newDB.Size() != oldDB.Size() || !newDB.ModTime().Equal(oldDB.ModTime()) {
			t.Fatal("the database file changed under the read")
		}
		if bytes.Equal(newWAL[:walfile.HeaderSize], oldWAL[:walfile.HeaderSize]) {
			t.Fatal("the -wal header did not change")
		}
	})
	rep, err := r.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 2+added {
		t.Fatalf("doctor after the log restarted mid-read: %s %v; want healthy with %d tasks", reportJSON(rep), err, 2+added)
	}
	if *reads < 2 {
		t.Fatalf("%d reads: the change went unnoticed", *reads)
	}
}
