package postgres

import (
	"context"
	"errors"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// TestMain lets the package's tests share one throwaway cluster, or runs
// one worker of a fleet test when started as one.
func TestMain(m *testing.M) {
	if orders := os.Getenv(fleetWorkerEnv); orders != "" {
		os.Exit(runFleetWorker(orders))
	}
	os.Exit(pgtest.Main(m))
}

// onWindows is the Windows ACL acknowledgement every ledger.Options of a
// test gives (a file ledger needs it there; a server ledger ignores it).
const onWindows = runtime.GOOS == "windows"

var schemas atomic.Int64

// openForTest opens a ledger on url in a schema of its own (unless s names
// one) and closes it when t ends.
func openForTest(t testing.TB, url string, opts ledger.Options, s settings) *ledger.Ledger {
	t.Helper()
	if s.schema == "" {
		s.schema = fmt.Sprintf("ledger_%d", schemas.Add(1))
	}
	l, err := open(context.Background(), url, opts, s)
	if err != nil {
		t.Fatalf("open: %v (%v)", err, errors.Unwrap(err))
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// direct is a connection of the test's own, beside the ledger's.
func direct(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exec(t testing.TB, url, sqlText string) {
	t.Helper()
	if _, err := direct(t, url).Exec(context.Background(), sqlText); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaFingerprint pins the catalog fingerprint of the schema the
// engine makes, shows it does not depend on the schema's name, and that a
// schema changed in any way is refused when opened again.
func TestSchemaFingerprint(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "first"})
	openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "Another Name"})
	for _, schema := range []string{"first", "Another Name"} {
		tx, err := direct(t, url).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// As the store reads it: the schema alone on the search path,
		// where the catalog prints its names unqualified.
		if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true)`, pgx.Identifier{schema}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		fp, err := fingerprint(ctx, tx, schema)
		tx.Rollback(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fp != schemaFingerprint {
			t.Fatalf("fingerprint of the schema made as %q = %s, want %s", schema, fp, schemaFingerprint)
		}
	}
	for _, tc := range []struct{ name, change string }{
		{"a CHECK dropped", `ALTER TABLE %s.tasks DROP CONSTRAINT tasks_version_check`},
		{"a column added", `ALTER TABLE %s.tasks ADD COLUMN extra text`},
		{"an index dropped", `DROP INDEX %s.tasks_status_idx`},
		{"a table added", `CREATE TABLE %s.planted (x int)`},
		{"a column's type", `ALTER TABLE %s.task_events ALTER COLUMN occurred_at TYPE real`},
		{"a metadata key added", `INSERT INTO %s.schema_meta VALUES ('extra', 'x')`},
		{"the version changed", `UPDATE %s.schema_meta SET value = '3' WHERE key = 'schema_version'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := fmt.Sprintf("changed_%d", schemas.Add(1))
			openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema}).Close()
			exec(t, url, fmt.Sprintf(tc.change, schema))
			for _, readOnly := range []bool{false, true} {
				_, err := open(ctx, url, ledger.Options{AllowExternalACL: onWindows, ReadOnly: readOnly}, settings{schema: schema})
				if !errors.Is(err, ledger.ErrStateConflict) || ledger.Reason(err) != "schema does not match" {
					t.Fatalf("opening (read-only %v) a schema with %s: %v, want StateConflict 'schema does not match'", readOnly, tc.name, err)
				}
			}
		})
	}
	t.Run("read-only makes no schema", func(t *testing.T) {
		_, err := open(ctx, url, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true}, settings{schema: "absent"})
		if !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != "database does not exist" {
			t.Fatalf("read-only open of a missing schema: %v, want InvalidInput 'database does not exist' (a missing file's answer)", err)
		}
		var n int
		if err := direct(t, url).QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = 'absent'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("read-only open made the schema (count %d, %v)", n, err)
		}
	})
}

// TestTwoClocks: two workers whose own clocks differ by 700 s (given as
// Options.Clock, as an embedder sets it) share one ledger and agree,
// because the time comes from the server: the one behind heartbeats and
// closes a task the one ahead started without "clock moved backwards",
// the one ahead reconciles without timing it out, and every time written
// lies within the test's bracket of the server's clock.
func TestTwoClocks(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	conn := direct(t, url)
	serverNow := func() float64 {
		var now float64
		if err := conn.QueryRow(ctx, `SELECT extract(epoch FROM clock_timestamp())::double precision`).Scan(&now); err != nil {
			t.Fatal(err)
		}
		return now
	}
	host := serverNow()
	hostTime := time.UnixMicro(int64(host * 1e6))
	ahead := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return hostTime.Add(700 * time.Second) }}, settings{schema: "fleet"})
	behind := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return hostTime }}, settings{schema: "fleet"})
	before := serverNow()
	timeout := 3600.0
	task, err := ahead.Create(ledgerrows.WithTimeoutSeconds(ledger.CreateParams{}, timeout))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ahead.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := behind.Heartbeat(task.ID); err != nil {
		t.Fatalf("heartbeat from the host behind: %v", err)
	}
	// 700 s ahead is past the default active grace of 600 s: by its own
	// clock the host ahead would time the task out.
	rep, err := ahead.Reconcile(ledger.ReconcileOptions{})
	if err != nil {
		t.Fatalf("reconcile from the host ahead: %v", err)
	}
	if rep.ActiveExamined != 1 || rep.TasksTimedOut != 0 {
		t.Fatalf("reconcile from the host ahead: %+v, want the running task examined and kept", rep)
	}
	closed, err := behind.CloseTask(task.ID, ledger.StatusSucceeded, ledger.CodeCompleted)
	if err != nil {
		t.Fatalf("close from the host behind: %v", err)
	}
	after := serverNow()
	stored := ledgerrows.FromLedger(closed)
	for name, at := range map[string]float64{"created_at": stored.CreatedAt, "started_at": *stored.StartedAt, "updated_at": stored.UpdatedAt, "ended_at": *stored.EndedAt} {
		if at < before || at > after {
			t.Errorf("%s = %.6f, outside the server's clock during the test [%.6f, %.6f]", name, at, before, after)
		}
	}
	if !(stored.CreatedAt <= *stored.StartedAt && *stored.StartedAt <= *stored.EndedAt) {
		t.Errorf("times out of order: created %.6f, started %.6f, ended %.6f", stored.CreatedAt, *stored.StartedAt, *stored.EndedAt)
	}
}

// TestBusyPastTheTimeout: a row held by another transaction for longer
// than the busy timeout is answered as busy (StateConflict, L11), and the
// task is unchanged.
func TestBusyPastTheTimeout(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, BusyTimeout: 200 * time.Millisecond}, settings{schema: "busy"})
	task, err := l.Create(ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := direct(t, url).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM busy.tasks WHERE id = $1 FOR UPDATE`, task.ID); err != nil {
		t.Fatal(err)
	}
	_, err = l.Start(task.ID)
	if !errors.Is(err, ledger.ErrBusy) || !errors.Is(err, ledger.ErrStateConflict) {
		t.Fatalf("start while another transaction holds the row: %v, want ErrBusy", err)
	}
	tx.Rollback(ctx)
	got, err := l.Get(task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ledger.StatusQueued || got.Version != 0 {
		t.Errorf("the busy start changed the task: %+v", got)
	}
}

// TestErrorsNameNoServer: a refused connection and a missing database
// answer fixed errors whose text names neither the socket's directory nor
// the user nor the database.
func TestErrorsNameNoServer(t *testing.T) {
	url := pgtest.Database(t)
	c := pgtest.SharedCluster(t)
	for name, bad := range map[string]string{
		"unknown role":     strings.Replace(url, "user=", "user=nosuchrole", 1),
		"unknown database": strings.Replace(url, "postgres:///", "postgres:///nosuchdatabase", 1),
	} {
		_, err := open(context.Background(), bad, ledger.Options{AllowExternalACL: onWindows}, settings{})
		if err == nil {
			t.Fatalf("%s: the open succeeded", name)
		}
		for _, secret := range []string{c.Dir, "nosuch", "postgres:", "host", "user"} {
			for e := err; e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), secret) {
					t.Errorf("%s: error %q names %q", name, e, secret)
				}
			}
		}
	}
}

// TestHistoryRefusesAnEventItsTaskCannotHold: an event that stands nowhere
// in the chain its task's row implies (here a second start at another
// time) makes History StateConflict, as on SQLite, and returns nothing.
func TestHistoryRefusesAnEventItsTaskCannotHold(t *testing.T) {
	url := pgtest.Database(t)
	l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "history"})
	task, err := l.Create(ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	if events, err := l.History(task.ID); err != nil || len(events) != 2 {
		t.Fatalf("history of a started task: %v, %v", events, err)
	}
	if _, err := direct(t, url).Exec(context.Background(), `INSERT INTO history.task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
		VALUES ($1, 'task_transition', 'queued', 'running', 1, 'started')`, task.ID); err != nil {
		t.Fatal(err)
	}
	events, err := l.History(task.ID)
	if !errors.Is(err, ledger.ErrStateConflict) || ledger.Reason(err) != "stored event is not consistent with its task" || events != nil {
		t.Fatalf("history with a foreign event: %v, %v; want StateConflict and nothing", events, err)
	}
}

// TestConcurrentCreatesOfOneID: workers on their own connections create
// one id at once; every one answers the same task (one creates it, the
// others find it and compare parameters, as on SQLite), and the ledger
// holds one row and one event.
func TestConcurrentCreatesOfOneID(t *testing.T) {
	url := pgtest.Database(t)
	const workers = 4
	ledgers := make([]*ledger.Ledger, workers)
	for i := range ledgers {
		ledgers[i] = openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "race"})
	}
	id := "0a0a0a0a-0000-4000-8000-00000000000a"
	start := make(chan struct{})
	answers := make(chan string, workers)
	for _, l := range ledgers {
		go func() {
			<-start
			task, err := l.Create(ledger.CreateParams{TaskID: id})
			if err != nil {
				answers <- "error: " + err.Error()
				return
			}
			answers <- fmt.Sprintf("%s created %v", task.ID, task.CreatedAt)
		}()
	}
	close(start)
	first := <-answers
	for range workers - 1 {
		if got := <-answers; got != first {
			t.Errorf("creates of one id answered %q and %q", first, got)
		}
	}
	var tasks, events int
	if err := direct(t, url).QueryRow(context.Background(), `SELECT (SELECT count(*) FROM race.tasks), (SELECT count(*) FROM race.task_events)`).Scan(&tasks, &events); err != nil {
		t.Fatal(err)
	}
	if tasks != 1 || events != 1 {
		t.Errorf("after %d creates of one id: %d tasks, %d events; want 1 and 1", workers, tasks, events)
	}
}

// TestReadOnlyServerLedger: a ledger opened read-only reads (get, list,
// history, a dry run) and refuses every write with ErrReadOnly, changing
// nothing.
func TestReadOnlyServerLedger(t *testing.T) {
	url := pgtest.Database(t)
	w := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "ro"})
	task, err := w.Create(ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	r := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true}, settings{schema: "ro"})
	if got, err := r.Get(task.ID); err != nil || got.ID != task.ID {
		t.Fatalf("read-only get: %v, %v", got, err)
	}
	if page, err := r.List(ledger.ListFilter{}); err != nil || len(page.Tasks) != 1 {
		t.Fatalf("read-only list: %v, %v", page, err)
	}
	if events, err := r.History(task.ID); err != nil || len(events) != 1 {
		t.Fatalf("read-only history: %v, %v", events, err)
	}
	if rep, err := r.Reconcile(ledger.ReconcileOptions{DryRun: true}); err != nil || rep.ActiveExamined != 1 {
		t.Fatalf("read-only dry run: %+v, %v", rep, err)
	}
	writes := map[string]func() error{
		"create":    func() error { _, err := r.Create(ledger.CreateParams{}); return err },
		"start":     func() error { _, err := r.Start(task.ID); return err },
		"heartbeat": func() error { _, err := r.Heartbeat(task.ID); return err },
		"close":     func() error { _, err := r.CloseTask(task.ID, ledger.StatusCancelled, ledger.NoCode); return err },
		"reconcile": func() error { _, err := r.Reconcile(ledger.ReconcileOptions{}); return err },
	}
	for name, write := range writes {
		if err := write(); !errors.Is(err, ledger.ErrReadOnly) {
			t.Errorf("read-only %s: %v, want ErrReadOnly", name, err)
		}
	}
	if got, err := w.Get(task.ID); err != nil || got.Version != 0 || got.Status != ledger.StatusQueued {
		t.Errorf("after the refused writes: %+v, %v", got, err)
	}
}
