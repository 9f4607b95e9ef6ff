package ledger

import (
	"testing"
)

// TestIdleReadOnlyLedgerHoldsNothing: a read-only ledger that stays open
// between reads holds no lock a writer's checkpoint waits for, and keeps
// no descriptor of a -shm its writers have since removed, however many
// writer sessions come and go beside it.
func TestIdleReadOnlyLedgerHoldsNothing(t *testing.T) {
	withReadLocks(t, true)
	p, w, keeper := livePair(t)
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := r.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	// Idle reader: the writer commits and a passive checkpoint copies every
	// frame of the log into the database.
	if _, err := w.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	var busy, logged, backfilled int
	if err := keeper.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &backfilled); err != nil {
		t.Fatal(err)
	}
	if busy != 0 || backfilled != logged {
		t.Fatalf("checkpoint beside an idle read-only ledger: busy %d, %d of %d frames copied", busy, backfilled, logged)
	}
	w.Close()
	keeper.Close()

	// Writer sessions that each make and remove the -wal/-shm pair.
	before := -1
	for i := 0; i < 8; i++ {
		w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(2000 + float64(i))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Create(CreateParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Doctor(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Doctor(); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			before = openDescriptors(t)
		}
	}
	if after := openDescriptors(t); after > before {
		t.Fatalf("%d descriptors after the second writer session, %d after the eighth", before, after)
	}
	rep, err := r.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != first.TaskCount+9 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
}
