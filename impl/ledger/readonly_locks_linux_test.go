//go:build linux

package ledger

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// checkpointLock makes p's -shm (empty) and returns a function that sets
// the lock a checkpoint holds on it (F_WRLCK) or clears it (F_UNLCK),
// through a descriptor of its own: OFD locks conflict even within a
// process.
func checkpointLock(t *testing.T, p string) func(typ int16) {
	t.Helper()
	if err := os.WriteFile(p+"-shm", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p+"-shm", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func(typ int16) {
		lk := unix.Flock_t{Type: typ, Start: storageguard.SQLiteShmReadLock, Len: 1}
		if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadOnlyWaitsForCheckpointLock: a checkpoint holds the -shm's first
// reader byte exclusively while it copies pages. A read-only open waits
// for it (up to the busy timeout), and reads once it is gone; one that
// outlasts the timeout on every attempt is StateConflict.
func TestReadOnlyWaitsForCheckpointLock(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	lock := checkpointLock(t, p)
	lock(unix.F_WRLCK)
	var waited []time.Duration
	storageguard.Hooks.LockPause = func(d time.Duration) {
		waited = append(waited, d)
		if len(waited) == 3 {
			lock(unix.F_UNLCK)
		}
	}
	t.Cleanup(func() { storageguard.Hooks.LockPause = time.Sleep })
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, BusyTimeout: 1000 * time.Millisecond})
	if err != nil {
		t.Fatalf("after %v: %v", waited, err)
	}
	l.Close()
	if len(waited) != 3 {
		t.Fatalf("waited %v", waited)
	}

	lock(unix.F_WRLCK)
	waited = nil
	storageguard.Hooks.LockPause = func(d time.Duration) { waited = append(waited, d) }
	pauses := recordPauses(t)
	_, err = Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, BusyTimeout: 20 * time.Millisecond})
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
	storageguard.Hooks.LockPause = func(time.Duration) {}
	t.Cleanup(func() { storageguard.Hooks.LockPause = time.Sleep })
	p := newLedgerFile(t, privateDir(t))
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
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
	lk := unix.Flock_t{Type: unix.F_WRLCK, Start: storageguard.SQLiteShmReadLock, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	_, err = Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, BusyTimeout: 5 * time.Millisecond})
	wantClass(t, err, ErrStateConflict)
	n, _ := w.guard.HeldLocks()
	if n != 0 {
		t.Fatalf("%d shared locks left on the database", n)
	}
}

// TestReadOnlyLockWaitEndsAtTheBusyTimeout: the wait for a checkpoint's
// lock pauses until the pauses add up to the busy timeout, and stops at
// the first pause that reaches it: never one pause more.
func TestReadOnlyLockWaitEndsAtTheBusyTimeout(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkpointLock(t, p)(unix.F_WRLCK)
	t.Cleanup(func() { storageguard.Hooks.LockPause = time.Sleep })
	for _, busyMS := range []int{1, 3, 7, 200} {
		var pauses []time.Duration
		storageguard.Hooks.LockPause = func(d time.Duration) { pauses = append(pauses, d) }
		if _, err := storageguard.LockedView(context.Background(), l.guard, busyMS); !errors.Is(err, ErrBusy) {
			t.Fatalf("busy timeout %d ms: %v, want ErrBusy", busyMS, err)
		}
		var sum time.Duration
		for _, d := range pauses {
			sum += d
		}
		limit := time.Duration(busyMS) * time.Millisecond
		if len(pauses) == 0 || sum < limit || sum-pauses[len(pauses)-1] >= limit {
			t.Errorf("busy timeout %d ms: pauses %v; want them to stop at the first that reaches it", busyMS, pauses)
		}
	}
}
