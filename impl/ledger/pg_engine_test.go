package ledger

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	model "github.com/stateguard/stateguard/model/ledger"
)

// TestMain lets the PostgreSQL engine's tests share one throwaway cluster;
// the package's other tests never start it.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var pgSchemas atomic.Int64

// openPGForTest opens the PostgreSQL engine on url in a schema of its own
// and closes it when t ends.
func openPGForTest(t testing.TB, url string, opts Options, s pgSettings) *pgEngine {
	t.Helper()
	if s.schema == "" {
		s.schema = fmt.Sprintf("ledger_%d", pgSchemas.Add(1))
	}
	e, err := openPostgres(context.Background(), url, opts, s)
	if err != nil {
		t.Fatalf("openPostgres: %v (%v)", err, errors.Unwrap(err))
	}
	t.Cleanup(func() { e.close() })
	return e
}

func pgExec(t testing.TB, url, sqlText string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sqlText); err != nil {
		t.Fatal(err)
	}
}

// TestPGSchemaFingerprint pins the catalog fingerprint of the schema the
// engine makes, shows it does not depend on the schema's name, and that a
// schema changed in any way is refused when opened again.
func TestPGSchemaFingerprint(t *testing.T) {
	url := pgtest.Database(t)
	e := openPGForTest(t, url, Options{}, pgSettings{schema: "first"})
	var fp string
	if err := e.pgTx(context.Background(), true, func(tx pgx.Tx) error {
		var err error
		fp, err = pgFingerprint(context.Background(), tx, "first")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if fp != pgSchemaFingerprint {
		t.Fatalf("fingerprint of the made schema = %s, want %s", fp, pgSchemaFingerprint)
	}
	openPGForTest(t, url, Options{}, pgSettings{schema: "Another Name"})
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
			schema := fmt.Sprintf("changed_%d", pgSchemas.Add(1))
			openPGForTest(t, url, Options{}, pgSettings{schema: schema}).close()
			pgExec(t, url, fmt.Sprintf(tc.change, schema))
			_, err := openPostgres(context.Background(), url, Options{}, pgSettings{schema: schema})
			if !errors.Is(err, ErrStateConflict) {
				t.Fatalf("opening a schema with %s: %v, want StateConflict", tc.name, err)
			}
		})
	}
}

// TestPGTwoClocks: two workers whose own clocks differ by 700 s (given as
// Options.Clock, as an embedder sets it) share one ledger and agree,
// because the time comes from the server: the one behind heartbeats and
// closes a task the one ahead started without "clock moved backwards", and
// every time written lies within the test's bracket of the server's clock.
func TestPGTwoClocks(t *testing.T) {
	url := pgtest.Database(t)
	host := wallClock()
	ahead := openPGForTest(t, url, Options{Clock: func() float64 { return host + 700 }}, pgSettings{schema: "shared"})
	behind := openPGForTest(t, url, Options{Clock: func() float64 { return host }}, pgSettings{schema: "shared"})
	ctx := context.Background()
	serverNow := func() float64 {
		var now float64
		if err := ahead.pgTx(ctx, true, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT extract(epoch FROM clock_timestamp())::double precision`).Scan(&now)
		}); err != nil {
			t.Fatal(err)
		}
		return now
	}
	before := serverNow()
	timeout := 3600.0
	task, err := ahead.create(ctx, CreateParams{TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ahead.start(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := behind.heartbeat(ctx, task.ID); err != nil {
		t.Fatalf("heartbeat from the host behind: %v", err)
	}
	closed, err := behind.closeTask(ctx, task.ID, StatusSucceeded, nil)
	if err != nil {
		t.Fatalf("close from the host behind: %v", err)
	}
	after := serverNow()
	for name, at := range map[string]float64{"created_at": closed.CreatedAt, "started_at": *closed.StartedAt, "updated_at": closed.UpdatedAt, "ended_at": *closed.EndedAt} {
		if at < before || at > after {
			t.Errorf("%s = %.6f, outside the server's clock during the test [%.6f, %.6f]", name, at, before, after)
		}
	}
	if !(closed.CreatedAt <= *closed.StartedAt && *closed.StartedAt <= *closed.EndedAt) {
		t.Errorf("times out of order: created %.6f, started %.6f, ended %.6f", closed.CreatedAt, *closed.StartedAt, *closed.EndedAt)
	}
}

// TestPGBusyPastTheTimeout: a row held by another transaction for longer
// than the busy timeout is answered as busy (StateConflict, L11), and the
// task is unchanged.
func TestPGBusyPastTheTimeout(t *testing.T) {
	url := pgtest.Database(t)
	e := openPGForTest(t, url, Options{BusyTimeoutMS: 200}, pgSettings{schema: "busy"})
	ctx := context.Background()
	task, err := e.create(ctx, CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM busy.tasks WHERE id = $1 FOR UPDATE`, task.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.start(ctx, task.ID)
	if !errors.Is(err, ErrBusy) || !errors.Is(err, ErrStateConflict) {
		t.Fatalf("start while another transaction holds the row: %v, want ErrBusy", err)
	}
	tx.Rollback(ctx)
	got, err := e.get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusQueued || got.Version != 0 {
		t.Errorf("the busy start changed the task: %+v", got)
	}
}

// TestPGErrorsNameNoServer: a refused connection answers a fixed error
// whose text names neither the socket's path nor the user nor the
// database.
func TestPGErrorsNameNoServer(t *testing.T) {
	url := pgtest.Database(t)
	bad := strings.Replace(url, "user=", "user=nosuchrole", 1)
	_, err := openPostgres(context.Background(), bad, Options{}, pgSettings{})
	if err == nil {
		t.Fatal("a connection as a role that does not exist succeeded")
	}
	c := pgtest.SharedCluster(t)
	for _, secret := range []string{c.Dir, "nosuchrole", "postgres:", "host"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q names %q", err, secret)
		}
	}
}

// pgPoolID names a small set of canonical ids so that operations collide.
func pgPoolID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x9e0000+n, n) }

// pgClass names an answer's class, with the clock-backwards refusal told
// apart from other StateConflicts (a damaged row read back is one too).
func pgClass(err error) string {
	for _, c := range []error{ErrInvalidInput, ErrTaskNotFound, ErrClockBackwards, ErrStateConflict} {
		if errors.Is(err, c) {
			return pgClassName(c)
		}
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return "ok"
}

func pgClassName(c error) string {
	if strings.Contains(c.Error(), "clock moved backwards") {
		return "ClockBackwards"
	}
	return c.Error()
}

func pgModelClass(err error) string {
	for _, c := range []error{model.ErrInvalidInput, model.ErrTaskNotFound, model.ErrClockBackwards, model.ErrStateConflict} {
		if errors.Is(err, c) {
			return pgClassName(c)
		}
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return "ok"
}

func pgAsModel(t Task) model.Task {
	return model.Task{
		ID: t.ID, ParentID: t.ParentID, Status: string(t.Status), DeliveryStatus: string(t.DeliveryStatus),
		DeliveryRequired: t.DeliveryRequired, PayloadHash: t.PayloadHash, TimeoutSeconds: t.TimeoutSeconds,
		CreatedAt: t.CreatedAt, StartedAt: t.StartedAt, UpdatedAt: t.UpdatedAt, EndedAt: t.EndedAt,
		DeadlineAt: t.DeadlineAt, DeliveryUpdatedAt: t.DeliveryUpdatedAt, TerminalCode: t.TerminalCode,
		DeliveryCode: t.DeliveryCode, Version: t.Version,
	}
}

// TestPGMatchesModel drives the PostgreSQL engine and model/ledger with
// the same random create, start, heartbeat, close, delivery and get calls
// at a scripted clock that sometimes steps back: after every call the
// answer's class, the task returned, every task row and the event log
// must agree. Each check runs in a fresh schema. A failure prints the
// operations (rapid's log) and a replayable seed.
//
// Default: 20 checks (a fresh schema each costs a second or so on a busy
// machine); more with -rapid.checks=N.
func TestPGMatchesModel(t *testing.T) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if !explicit {
		old := flag.Lookup("rapid.checks").Value.String()
		if err := flag.Set("rapid.checks", "20"); err != nil {
			t.Fatal(err)
		}
		defer flag.Set("rapid.checks", old)
	}
	url := pgtest.Database(t)
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		now := 1_000_000.0
		e, err := openPostgres(ctx, url, Options{}, pgSettings{
			schema:    fmt.Sprintf("model_%d", pgSchemas.Add(1)),
			testClock: func() float64 { return now },
		})
		if err != nil {
			rt.Fatal(err)
		}
		defer e.close()
		var m model.Model
		id := func(label string) string { return pgPoolID(rapid.IntRange(0, 2).Draw(rt, label)) }
		code := func(label string) *string {
			c := rapid.SampledFrom([]string{"", "completed", "worker_failed", "deadline_exceeded", "caller_cancelled", "transport_acknowledged", "transport_failed", "internal_task", "bogus_code", "Bad Code"}).Draw(rt, label)
			if c == "" {
				return nil
			}
			return &c
		}
		check := func(op string, got Task, gotErr error, want model.Task, wantErr error) {
			if pgClass(gotErr) != pgModelClass(wantErr) {
				rt.Fatalf("%s: engine %s (%v), model %s (%v)", op, pgClass(gotErr), gotErr, pgModelClass(wantErr), wantErr)
			}
			if gotErr == nil && fmt.Sprintf("%+v", showModelTask(pgAsModel(got))) != fmt.Sprintf("%+v", showModelTask(want)) {
				rt.Fatalf("%s: engine returned %s, model %s", op, showModelTask(pgAsModel(got)), showModelTask(want))
			}
		}
		steps := rapid.IntRange(20, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			now += rapid.SampledFrom([]float64{30, -1, 0, 0.5, 700}).Draw(rt, "dt")
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0:
				var timeout *float64
				if rapid.Bool().Draw(rt, "with timeout") {
					v := rapid.SampledFrom([]float64{0, 1, 60, math.Copysign(0, -1)}).Draw(rt, "timeout")
					timeout = &v
				}
				parent := ""
				if rapid.Bool().Draw(rt, "with parent") {
					parent = id("parent")
				}
				internalTask := rapid.Bool().Draw(rt, "internal")
				tid := id("id")
				got, gotErr := e.create(ctx, CreateParams{TaskID: tid, ParentID: parent, TimeoutSeconds: timeout, Internal: internalTask})
				want, wantErr := m.Create(model.CreateParams{TaskID: tid, ParentID: parent, TimeoutSeconds: timeout, DeliveryRequired: !internalTask}, now)
				check("create", got, gotErr, want, wantErr)
			case 1:
				tid := id("id")
				got, gotErr := e.start(ctx, tid)
				want, wantErr := m.Start(tid, now)
				check("start", got, gotErr, want, wantErr)
			case 2:
				tid := id("id")
				got, gotErr := e.heartbeat(ctx, tid)
				want, wantErr := m.Heartbeat(tid, now)
				check("heartbeat", got, gotErr, want, wantErr)
			case 3:
				tid := id("id")
				status := rapid.SampledFrom([]string{"succeeded", "failed", "timed_out", "cancelled", "running"}).Draw(rt, "status")
				c := code("code")
				got, gotErr := e.closeTask(ctx, tid, Status(status), c)
				want, wantErr := m.CloseCode(tid, status, c, now)
				check("close", got, gotErr, want, wantErr)
			case 4:
				tid := id("id")
				status := rapid.SampledFrom([]string{"delivered", "failed", "not_applicable", "pending"}).Draw(rt, "status")
				c := code("code")
				got, gotErr := e.setDelivery(ctx, tid, DeliveryStatus(status), c)
				want, wantErr := m.SetDeliveryCode(tid, status, c, now)
				check("delivery", got, gotErr, want, wantErr)
			case 5:
				tid := id("id")
				got, gotErr := e.get(ctx, tid)
				want, wantErr := m.Get(tid)
				check("get", got, gotErr, want, wantErr)
			}
			pgCompareRows(rt, e, &m)
		}
	})
}

// pgCompareRows compares every task row and the event log (in sequence
// order; the sequences themselves only need to increase).
func pgCompareRows(rt *rapid.T, e *pgEngine, m *model.Model) {
	ctx := context.Background()
	var tasks []string
	var events []string
	err := e.pgTx(ctx, true, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM tasks ORDER BY id COLLATE "C"`)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, id := range ids {
			task, err := pgGetTask(ctx, tx, id, "")
			if err != nil {
				return err
			}
			tasks = append(tasks, showModelTask(pgAsModel(task)))
		}
		rows, err = tx.Query(ctx, `SELECT sequence, task_id, event_kind, coalesce(from_value, 'null'), to_value, occurred_at, coalesce(code, 'null') FROM task_events ORDER BY sequence`)
		if err != nil {
			return err
		}
		defer rows.Close()
		last := int64(0)
		for rows.Next() {
			var seq int64
			var id, kind, from, to, code string
			var at float64
			if err := rows.Scan(&seq, &id, &kind, &from, &to, &at, &code); err != nil {
				return err
			}
			if seq <= last {
				return fmt.Errorf("event sequence %d after %d", seq, last)
			}
			last = seq
			events = append(events, fmt.Sprintf("%s %s %s>%s at %v code %s", id, kind, from, to, at, code))
		}
		return rows.Err()
	})
	if err != nil {
		rt.Fatal(err)
	}
	var want []string
	for _, task := range m.Tasks() {
		want = append(want, showModelTask(task))
	}
	if strings.Join(tasks, "\n") != strings.Join(want, "\n") {
		rt.Fatalf("task rows differ\nengine:\n%s\nmodel:\n%s", strings.Join(tasks, "\n"), strings.Join(want, "\n"))
	}
	var wantEvents []string
	for _, ev := range m.Events() {
		from, code := "null", "null"
		if ev.From != nil {
			from = *ev.From
		}
		if ev.Code != nil {
			code = *ev.Code
		}
		wantEvents = append(wantEvents, fmt.Sprintf("%s %s %s>%s at %v code %s", ev.TaskID, ev.Kind, from, ev.To, ev.OccurredAt, code))
	}
	if strings.Join(events, "\n") != strings.Join(wantEvents, "\n") {
		rt.Fatalf("event logs differ\nengine:\n%s\nmodel:\n%s", strings.Join(events, "\n"), strings.Join(wantEvents, "\n"))
	}
}

// showModelTask prints a row with its pointers followed, bit-exact for
// times (so -0 and 0 differ).
func showModelTask(t model.Task) string {
	f := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%v/%x", *p, math.Float64bits(*p))
	}
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("%s parent=%s %s/%s required=%v hash=%s timeout=%s created=%s started=%s updated=%s ended=%s deadline=%s dup=%s tcode=%s dcode=%s v%d",
		t.ID, s(t.ParentID), t.Status, t.DeliveryStatus, t.DeliveryRequired, s(t.PayloadHash), f(t.TimeoutSeconds),
		f(&t.CreatedAt), f(t.StartedAt), f(&t.UpdatedAt), f(t.EndedAt), f(t.DeadlineAt), f(&t.DeliveryUpdatedAt),
		s(t.TerminalCode), s(t.DeliveryCode), t.Version)
}
