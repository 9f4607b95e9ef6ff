//go:build linux

package ledger

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadOnlyWaitsForCheckpointLock: a checkpoint holds the -shm's first
// reader byte exclusively while it copies pages. A read-only open waits
// for it (up to the busy timeout), and reads once it is gone; one that
// outlasts the timeout on every attempt is StateConflict.
func TestReadOnlyWaitsForCheckpointLock(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	if err := os.WriteFile(p+"-shm", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A descriptor of its own: OFD locks conflict even within a process.
	f, err := os.OpenFile(p+"-shm", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lock := func(typ int16) {
		lk := unix.Flock_t{Type: typ, Start: sqliteShmReadLock, Len: 1}
		if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			t.Fatal(err)
		}
	}
	lock(unix.F_WRLCK)
	var waited []time.Duration
	lockPause = func(d time.Duration) {
		waited = append(waited, d)
		if len(waited) == 3 {
			lock(unix.F_UNLCK)
		}
	}
	t.Cleanup(func() { lockPause = time.Sleep })
	l, err := Open(p, Options{ReadOnly: true, BusyTimeoutMS: 1000})
	if err != nil {
		t.Fatalf("after %v: %v", waited, err)
	}
	l.Close()
	if len(waited) != 3 {
		t.Fatalf("waited %v", waited)
	}

	lock(unix.F_WRLCK)
	waited = nil
	lockPause = func(d time.Duration) { waited = append(waited, d) }
	pauses := recordPauses(t)
	_, err = Open(p, Options{ReadOnly: true, BusyTimeoutMS: 20})
	wantClass(t, err, ErrStateConflict)
	var total time.Duration
	for _, d := range waited {
		total += d
	}
	attempts := len(readOnlyPauses) + 1
	if len(*pauses) != len(readOnlyPauses) || total < time.Duration(attempts)*20*time.Millisecond {
		t.Fatalf("pauses %v, waited %v in all", *pauses, total)
	}
}

// TestReadOnlyBusyLeavesNoLock: a read-only open that gives up on a
// checkpoint's lock drops the shared lock on the database it took first,
// even though the descriptor stays open for a writer of the same process.
func TestReadOnlyBusyLeavesNoLock(t *testing.T) {
	recordPauses(t)
	lockPause = func(time.Duration) {}
	t.Cleanup(func() { lockPause = time.Sleep })
	p := newLedgerFile(t, privateDir(t))
	w, err := Open(p, Options{Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p+"-shm", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Start: sqliteShmReadLock, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	_, err = Open(p, Options{ReadOnly: true, BusyTimeoutMS: 5})
	wantClass(t, err, ErrStateConflict)
	heldMu.Lock()
	n := w.guard.held.dbLocks
	heldMu.Unlock()
	if n != 0 {
		t.Fatalf("%d shared locks left on the database", n)
	}
}
