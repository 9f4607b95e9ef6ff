//go:build linux

package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// TestReadOnlyContextEndsTheLockWait: on a read-only ledger the
// wait for a checkpoint's lock is the wait for the database, and a
// ...Context read whose context ends during it answers the context (the
// package documentation), instead of waiting out the busy timeout on every
// attempt and answering ErrBusy.
func TestReadOnlyContextEndsTheLockWait(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkpointLock(t, p)(unix.F_WRLCK)
	for _, name := range []string{"get", "doctor"} {
		ctx, cancel := context.WithCancel(context.Background())
		pauses := 0
		storageguard.Hooks.LockPause = func(time.Duration) {
			pauses++
			cancel()
		}
		t.Cleanup(func() { storageguard.Hooks.LockPause = time.Sleep })
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
