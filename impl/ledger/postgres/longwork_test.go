package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// longWorkBusyMS is the busy timeout of the tests below: far longer than
// any of their waits, far shorter than their work.
const longWorkBusyMS = 1000

// storeForTest connects a store of its own on url with the busy timeout
// of longWorkBusyMS, in schema.
func storeForTest(t *testing.T, url, schema string) *store {
	t.Helper()
	e, err := connect(context.Background(), url, serverstore.Settings{BusyTimeoutMS: longWorkBusyMS}, settings{schema: schema})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestWorkAfterTheTableLockIsNoWait: once a write holds the table lock
// (reconcile, prune, restore), nothing else can make it wait, so its work
// runs as long as it takes; the busy timeout bounded the wait for the
// lock. Reconcile at 250,000 tasks through the command line, on a loaded
// machine, answered "database is busy" with nobody else connected.
func TestWorkAfterTheTableLockIsNoWait(t *testing.T) {
	url := pgtest.Database(t)
	e := storeForTest(t, url, "longwork")
	err := e.Write(context.Background(), func(w serverstore.WriteTx) error {
		if err := w.LockTasks(); err != nil {
			return err
		}
		// Work of three busy timeouts, on the server.
		_, err := w.(*writeTx).tx.Exec(w.(*writeTx).ctx, `SELECT pg_sleep($1)`, 3*longWorkBusyMS/1000.0)
		return fault(context.Background(), "write", err)
	})
	if err != nil {
		t.Fatalf("work after the table lock: %v, want it done", err)
	}

	// The wait for the lock itself stays bounded.
	ctx := context.Background()
	tx, err := direct(t, url).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE longwork.tasks IN ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	err = e.Write(ctx, func(w serverstore.WriteTx) error { return w.LockTasks() })
	if !errors.Is(err, serverstore.ErrBusy) {
		t.Fatalf("the table lock while another writer holds the table: %v, want busy", err)
	}
}

// TestReconcileReadOutlastsTheBusyTimeout: reconcile's read (the dry
// run's snapshot) hands its rows to a reader slower than the busy timeout,
// with no lock waited for: it is work, not a wait, and completes.
func TestReconcileReadOutlastsTheBusyTimeout(t *testing.T) {
	url := pgtest.Database(t)
	l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "slowreader"})
	task, err := l.Create(ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	// Rows enough to fill the socket's buffers, so the server waits on
	// the reader while the statement runs.
	const copies = 20000
	cloneTask(t, direct(t, url), "slowreader", task.ID, 1, copies, "NULL")
	e := storeForTest(t, url, "slowreader")
	rows := 0
	err = e.Read(context.Background(), func(tx serverstore.ReadTx) error {
		return tx.ReconcileRows(func(bool, serverstore.Row) error {
			if rows++; rows == 1 {
				// A reader slowed by a loaded machine: three busy timeouts.
				time.Sleep(3 * longWorkBusyMS * time.Millisecond)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatalf("a slow reader of reconcile's rows: %v, want every row", err)
	}
	if rows != copies+1 {
		t.Errorf("read %d rows, want %d", rows, copies+1)
	}
}
