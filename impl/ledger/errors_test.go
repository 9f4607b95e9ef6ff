package ledger

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"
)

// A caller can tell "the database was busy" (retry later) from "the task
// is in another terminal state" (the first answer stands); both still match
// ErrStateConflict.
func TestDistinctStateConflicts(t *testing.T) {
	l, _, p := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.CloseTask(task.ID, StatusSucceeded, ""); err != nil {
		t.Fatal(err)
	}
	_, err = l.CloseTask(task.ID, StatusFailed, "")
	if !errors.Is(err, ErrAlreadyTerminal) || !errors.Is(err, ErrStateConflict) || errors.Is(err, ErrBusy) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := l.SetDelivery(task.ID, DeliveryDelivered, ""); err != nil {
		t.Fatal(err)
	}
	_, err = l.SetDelivery(task.ID, DeliveryFailed, "")
	if !errors.Is(err, ErrDeliveryClosed) || !errors.Is(err, ErrStateConflict) || errors.Is(err, ErrAlreadyTerminal) {
		t.Fatalf("second delivery: %v", err)
	}

	// Another connection holds the write lock past a 1 ms busy timeout.
	busy, err := Open(p, Options{AllowExternalACL: onWindows, BusyTimeout: 1 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	holder := holdWriteLock(t, p)
	defer holder()
	_, err = busy.Create(CreateParams{Internal: true})
	if !errors.Is(err, ErrBusy) || !errors.Is(err, ErrStateConflict) || errors.Is(err, ErrAlreadyTerminal) {
		t.Fatalf("create under a held write lock: %v", err)
	}
}

// holdWriteLock takes SQLite's write lock on the database at p from a
// separate connection and returns the function that releases it.
func holdWriteLock(t *testing.T, p string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		db.Close()
	}
}

// A context ends the wait for another connection's write lock long before
// the 5 s busy timeout, writes nothing, and leaves the ledger usable; an
// already cancelled context ends reads and writes at once.
func TestContextEndsTheWait(t *testing.T) {
	l, _, p := openTest(t)
	release := holdWriteLock(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := l.CreateContext(ctx, CreateParams{})
	waited := time.Since(start)
	release()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrStateConflict) {
		t.Fatalf("create under a held lock with a 50 ms deadline: %v", err)
	}
	if waited > 2*time.Second {
		t.Fatalf("waited %v: the context did not end the busy wait", waited)
	}

	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if _, err := l.GetContext(cancelled, "00000000-0000-4000-8000-000000000001"); !errors.Is(err, context.Canceled) {
		t.Fatalf("get with a cancelled context: %v", err)
	}
	if _, err := l.DoctorContext(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("doctor with a cancelled context: %v", err)
	}
	if _, err := l.reconcileSeconds(cancelled, 600, 600, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("reconcile with a cancelled context: %v", err)
	}

	// Nothing was written, and the ledger still reads and writes.
	rep, err := l.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 0 {
		t.Fatalf("after the cancelled calls: %+v %v", rep, err)
	}
	if _, err := l.Create(CreateParams{}); err != nil {
		t.Fatalf("create after the cancelled calls: %v", err)
	}
}
