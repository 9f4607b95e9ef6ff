package ledger

import (
	"context"
	"database/sql"
	"errors"
	"testing"
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
	busy, err := Open(p, Options{BusyTimeoutMS: 1})
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
