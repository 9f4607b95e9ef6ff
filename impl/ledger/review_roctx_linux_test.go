//go:build linux

package ledger

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReviewReadOnlyContextEndsTheLockWait: on a read-only ledger the
// wait for a checkpoint's lock is the wait for the database, and a
// ...Context read whose context ends during it answers the context (the
// package documentation), instead of waiting out the busy timeout on every
// attempt and answering ErrBusy.
func TestReviewReadOnlyContextEndsTheLockWait(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	l, err := Open(p, Options{ReadOnly: true, BusyTimeoutMS: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.WriteFile(p+"-shm", nil, 0o600); err != nil {
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
	for _, name := range []string{"get", "doctor"} {
		ctx, cancel := context.WithCancel(context.Background())
		pauses := 0
		lockPause = func(time.Duration) {
			pauses++
			cancel()
		}
		t.Cleanup(func() { lockPause = time.Sleep })
		if name == "get" {
			_, err = l.GetContext(ctx, "00000000-0000-4000-8000-000000000001")
		} else {
			_, err = l.DoctorContext(ctx)
		}
		cancel()
		if !errors.Is(err, context.Canceled) || pauses > 1 {
			t.Errorf("%s cancelled while waiting for a lock: %v after %d pauses, want context.Canceled after 1", name, err, pauses)
		}
	}
}

// TestReadOnlyLockWaitEndsAtTheBusyTimeout: the wait for a checkpoint's
// lock pauses until the pauses add up to the busy timeout, and stops at
// the first pause that reaches it: never one pause more.
func TestReadOnlyLockWaitEndsAtTheBusyTimeout(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	l, err := Open(p, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.WriteFile(p+"-shm", nil, 0o600); err != nil {
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
	t.Cleanup(func() { lockPause = time.Sleep })
	for _, busyMS := range []int{1, 3, 7, 200} {
		var pauses []time.Duration
		lockPause = func(d time.Duration) { pauses = append(pauses, d) }
		v := &roView{g: l.guard}
		if err := v.lock(context.Background(), busyMS); !errors.Is(err, ErrBusy) {
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
