package postgres

import (
	"context"
	"errors"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// TestReconcileInBatchesMatchesSQLite: a ledger of 9,001 running tasks
// past the grace (more than two statements' worth) and 5,002 ended ones
// whose delivery is overdue, made on the server by copying rows a ledger
// wrote and moved to a SQLite file by a backup, reconciled on both
// engines at one time with no delivery grace (the tasks timed out are
// closed in the same apply): the same reports, and afterwards every row
// of both, events with their sequences, equal.
func TestReconcileInBatchesMatchesSQLite(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	now := 1_000_000.0
	schema := "reconcile_batches"
	server := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema, testClock: func() float64 { return now }})
	running, ended, internalEnded := poolID(1), poolID(2), poolID(3)
	for _, p := range []ledger.CreateParams{{TaskID: running}, {TaskID: ended}, {TaskID: internalEnded, Internal: true}} {
		if _, err := server.Create(p); err != nil {
			t.Fatal(err)
		}
		now += 1
		if _, err := server.Start(p.TaskID); err != nil {
			t.Fatal(err)
		}
		now += 1
	}
	for _, id := range []string{ended, internalEnded} {
		if _, err := server.CloseTask(id, ledger.StatusSucceeded, ledger.CodeCompleted); err != nil {
			t.Fatal(err)
		}
		now += 1
	}
	conn := direct(t, url)
	cloneTask(t, conn, schema, running, 0x01000000, 9000, "NULL")
	cloneTask(t, conn, schema, ended, 0x02000000, 2500, "NULL")
	cloneTask(t, conn, schema, internalEnded, 0x03000000, 2500, "NULL")
	copyPath := filepath.Join(t.TempDir(), "copy.sqlite")
	if _, err := server.Backup(copyPath); err != nil {
		t.Fatalf("%v (%v)", err, errors.Unwrap(err))
	}
	fileNow := now
	file, err := ledger.Open(copyPath, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows}, func() float64 { return fileNow }))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()

	now += 100_000
	fileNow = now
	// No delivery grace: a task timed out is closed in the same apply,
	// its row written once with both events.
	for _, dry := range []bool{true, false, false} {
		got, err := ledgerrows.ReconcileSeconds(ctx, server, 600, 0, dry)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ledgerrows.ReconcileSeconds(ctx, file, 600, 0, dry)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("reconcile (dry run %v) on the server %+v, on SQLite %+v", dry, got, want)
		}
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := serverRows(t, conn, schema), fileRows(t, copyPath); got != want {
		t.Fatalf("rows after the reconcile differ (%d and %d bytes)", len(got), len(want))
	}
	var timedOut, closed int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'timed_out'), count(*) FILTER (WHERE delivery_status <> 'pending')
		FROM reconcile_batches.tasks`).Scan(&timedOut, &closed); err != nil {
		t.Fatal(err)
	}
	if timedOut != 9001 || closed != 9001+5002 {
		t.Fatalf("after the reconcile: %d timed out, %d deliveries settled", timedOut, closed)
	}
}

// gatedClock is a test clock that can stop the first call after it is
// armed until released: the transaction reading it then holds its locks
// (the time is read after them) while the test orders the other
// connection's transaction against it.
type gatedClock struct {
	at   float64
	gate atomic.Pointer[gate]
}

type gate struct{ reached, release chan struct{} }

func (c *gatedClock) now() float64 {
	if g := c.gate.Swap(nil); g != nil {
		close(g.reached)
		<-g.release
	}
	return c.at
}

func (c *gatedClock) arm() *gate {
	g := &gate{reached: make(chan struct{}), release: make(chan struct{})}
	c.gate.Store(g)
	return g
}

// waitForLockWait returns once a transaction waits for a lock on the
// schema's tasks table, as the server's lock table shows it.
func waitForLockWait(t *testing.T, conn *pgx.Conn, schema string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var waiting int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = to_regclass($1)`,
			pgx.Identifier{schema, "tasks"}.Sanitize()).Scan(&waiting)
		if err != nil {
			t.Fatalf("no transaction came to wait for the tasks' lock: %v", err)
		}
		if waiting > 0 {
			return
		}
	}
}

// TestReconcileRacesHeartbeats orders a heartbeat and a reconcile on
// two connections both ways, each time with three running tasks not
// updated for longer than the grace:
//
//   - the heartbeat holds its task's row when the reconcile starts: the
//     reconcile waits, then reads the heartbeat's time, so that task
//     stays running with the heartbeat's update, and the two others
//     time out;
//   - the reconcile holds the tasks when the heartbeat starts: the
//     heartbeat waits, then finds its task timed out and is refused, so
//     no heartbeat is acknowledged that the ledger does not keep.
//
// The order is made by a test clock that stops its transaction after
// its locks are held, and by the server's lock table showing the other
// transaction waiting: no sleep.
func TestReconcileRacesHeartbeats(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	conn := direct(t, url)
	for _, heartbeatFirst := range []bool{true, false} {
		name := "reconcile_first"
		if heartbeatFirst {
			name = "heartbeat_first"
		}
		t.Run(name, func(t *testing.T) {
			worker := &gatedClock{at: 1_000}
			reconciler := &gatedClock{at: 1_000}
			w := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: name, testClock: worker.now})
			r := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: name, testClock: reconciler.now})
			ids := []string{poolID(1), poolID(2), poolID(3)}
			for _, id := range ids {
				if _, err := w.Create(ledger.CreateParams{TaskID: id}); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Start(id); err != nil {
					t.Fatal(err)
				}
			}
			// 700 s later the tasks are past a grace of 600 s, unless
			// the heartbeat counts.
			worker.at, reconciler.at = 1_700, 1_700

			type answer struct {
				task ledger.Task
				err  error
			}
			beat := make(chan answer, 1)
			swept := make(chan error, 1)
			heartbeat := func() {
				task, err := w.Heartbeat(ids[0])
				beat <- answer{task, err}
			}
			reconcile := func() {
				_, err := ledgerrows.ReconcileSeconds(ctx, r, 600, 3600, false)
				swept <- err
			}
			var g *gate
			if heartbeatFirst {
				g = worker.arm()
				go heartbeat()
				<-g.reached // the heartbeat holds the task's row
				go reconcile()
			} else {
				g = reconciler.arm()
				go reconcile()
				<-g.reached // the reconcile holds the tasks
				go heartbeat()
			}
			// Released on every path, so that a failure leaves no
			// transaction waiting on the gate.
			release := sync.OnceFunc(func() { close(g.release) })
			defer release()
			waitForLockWait(t, conn, name)
			release()
			hb, err := <-beat, <-swept
			if err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			got, err := w.Get(ids[0])
			if err != nil {
				t.Fatal(err)
			}
			if heartbeatFirst {
				if hb.err != nil || !hb.task.UpdatedAt.Equal(time.Unix(1_700, 0)) {
					t.Fatalf("heartbeat before the reconcile: %+v, %v", hb.task, hb.err)
				}
				if got.Status != ledger.StatusRunning || !got.UpdatedAt.Equal(time.Unix(1_700, 0)) || got.Version != hb.task.Version {
					t.Fatalf("the acknowledged heartbeat's task after the reconcile: %+v", got)
				}
			} else {
				if !errors.Is(hb.err, ledger.ErrStateConflict) {
					t.Fatalf("heartbeat after the reconcile: %+v, %v; want a refusal", hb.task, hb.err)
				}
				if got.Status != ledger.StatusTimedOut {
					t.Fatalf("the task the reconcile timed out: %+v", got)
				}
			}
			for _, id := range ids[1:] {
				if other, err := w.Get(id); err != nil || other.Status != ledger.StatusTimedOut {
					t.Fatalf("a task no one heartbeated: %+v, %v", other, err)
				}
			}
			if rep, err := w.Doctor(); err != nil || !rep.Healthy {
				t.Fatalf("doctor after the race: %s, %v", reportJSON(t, rep), err)
			}
		})
	}
}
