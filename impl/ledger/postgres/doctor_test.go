package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// doctorSequence drives one ledger through a tree of tasks in every
// state, a reconcile that times one out and closes deliveries, with the
// time set through now before each call.
func doctorSequence(t *testing.T, l *ledger.Ledger, now *float64) {
	t.Helper()
	ctx := context.Background()
	timeout := 60.0
	step := func(what string, err error) {
		t.Helper()
		*now += 30
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	call := func(what string, f func() (ledger.Task, error)) {
		t.Helper()
		_, err := f()
		step(what, err)
	}
	root, a, b, c, d, e := poolID(0), poolID(1), poolID(2), poolID(3), poolID(4), poolID(5)
	call("create root", func() (ledger.Task, error) { return l.Create(ledger.CreateParams{TaskID: root}) })
	call("create a", func() (ledger.Task, error) {
		return l.Create(ledgerrows.WithTimeoutSeconds(ledger.CreateParams{TaskID: a, ParentID: root}, timeout))
	})
	call("create b", func() (ledger.Task, error) {
		return l.Create(ledger.CreateParams{TaskID: b, ParentID: a, Internal: true})
	})
	call("create c", func() (ledger.Task, error) { return l.Create(ledger.CreateParams{TaskID: c, ParentID: root}) })
	call("create d", func() (ledger.Task, error) { return l.Create(ledger.CreateParams{TaskID: d}) })
	call("create e", func() (ledger.Task, error) {
		return l.Create(ledgerrows.WithTimeoutSeconds(ledger.CreateParams{TaskID: e}, timeout))
	})
	for _, id := range []string{root, a, b, c, e} {
		call("start", func() (ledger.Task, error) { return l.Start(id) })
	}
	call("heartbeat", func() (ledger.Task, error) { return l.Heartbeat(a) })
	call("close b", func() (ledger.Task, error) { return l.CloseTask(b, ledger.StatusSucceeded, ledger.CodeCompleted) })
	call("close c", func() (ledger.Task, error) { return l.CloseTask(c, ledger.StatusFailed, ledger.NoCode) })
	call("close d", func() (ledger.Task, error) { return l.CloseTask(d, ledger.StatusCancelled, ledger.NoCode) })
	call("deliver c", func() (ledger.Task, error) { return l.SetDelivery(c, ledger.DeliveryDelivered, ledger.NoCode) })
	*now += 1000
	_, err := ledgerrows.ReconcileSeconds(ctx, l, 600, 3600, false)
	step("reconcile", err)
	*now += 7200
	_, err = ledgerrows.ReconcileSeconds(ctx, l, 600, 3600, false)
	step("reconcile again", err)
	call("create late", func() (ledger.Task, error) { return l.Create(ledger.CreateParams{TaskID: poolID(6), ParentID: d}) })
}

func reportJSON(t *testing.T, rep ledger.DoctorReport) string {
	t.Helper()
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestDoctorMatchesSQLite: the same operations on both engines give the
// same doctor report, every count and state key alike, and a healthy one.
func TestDoctorMatchesSQLite(t *testing.T) {
	url := pgtest.Database(t)
	now := 1_000_000.0
	server := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{testClock: func() float64 { return now }})
	doctorSequence(t, server, &now)

	fileNow := 1_000_000.0
	file, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.sqlite"), ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows}, func() float64 { return fileNow }))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	doctorSequence(t, file, &fileNow)

	got, err := server.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	want, err := file.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	if reportJSON(t, got) != reportJSON(t, want) {
		t.Fatalf("doctor on the server\n%s\non SQLite\n%s", reportJSON(t, got), reportJSON(t, want))
	}
	if !got.Healthy || got.TaskCount != 7 || got.EventCount < 7 {
		t.Fatalf("doctor of a sound ledger: %s", reportJSON(t, got))
	}
}

// TestDoctorSeesPlantedDamage: each damage written beside the ledger
// with raw SQL makes the doctor unhealthy, with the count it belongs to.
func TestDoctorSeesPlantedDamage(t *testing.T) {
	url := pgtest.Database(t)
	cases := []struct {
		name   string
		damage string // %s and %[1]s: the quoted schema
		count  func(ledger.DoctorReport) int
	}{
		{"an event out of its chain", `INSERT INTO %s.task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT id, 'task_transition', 'queued', 'running', 1, 'started' FROM %[1]s.tasks WHERE parent_id IS NULL`,
			func(r ledger.DoctorReport) int { return r.EventInconsistencyCount }},
		{"an event of another time", `UPDATE %s.task_events SET occurred_at = occurred_at + 1 WHERE event_kind = 'created' AND task_id IN (SELECT id FROM %[1]s.tasks WHERE parent_id IS NULL)`,
			func(r ledger.DoctorReport) int { return r.EventInconsistencyCount }},
		{"a running task that never started", `UPDATE %s.tasks SET started_at = NULL, deadline_at = NULL WHERE status = 'running'`,
			func(r ledger.DoctorReport) int { return r.TimestampInconsistencyCount }},
		{"a version below its history", `UPDATE %s.tasks SET version = 0 WHERE status = 'running'`,
			func(r ledger.DoctorReport) int { return r.StateInconsistencyCount }},
		{"a child older than its parent", `UPDATE %s.tasks p SET created_at = c.created_at + 1, updated_at = c.created_at + 1, delivery_updated_at = c.created_at + 1
			FROM %[1]s.tasks c WHERE c.parent_id = p.id`,
			func(r ledger.DoctorReport) int { return r.TimestampInconsistencyCount }},
		{"a parent cycle", `UPDATE %s.tasks SET parent_id = (SELECT id FROM %[1]s.tasks WHERE parent_id IS NOT NULL) WHERE parent_id IS NULL`,
			func(r ledger.DoctorReport) int { return r.ParentCycleCount }},
		{"a grant to PUBLIC", `GRANT SELECT ON %s.tasks TO PUBLIC`, quickCheckFailed},
		{"a column's grant to PUBLIC", `GRANT UPDATE (status) ON %s.tasks TO PUBLIC`, quickCheckFailed},
		{"a column added", `ALTER TABLE %s.tasks ADD COLUMN note text`, quickCheckFailed},
		{"the foreign keys' triggers off", `ALTER TABLE %s.task_events DISABLE TRIGGER ALL`, quickCheckFailed},
		{"an invalid index", `UPDATE pg_index SET indisvalid = false WHERE indexrelid = '%s.tasks_parent_idx'::regclass`, quickCheckFailed},
		{"a table owned by another role", `DO $$ BEGIN CREATE ROLE someone_else; EXCEPTION WHEN duplicate_object THEN NULL; END $$; ALTER TABLE %s.task_events OWNER TO someone_else`, quickCheckFailed},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			schema := "damage_" + string(rune('a'+i))
			l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema})
			root, err := l.Create(ledger.CreateParams{})
			if err != nil {
				t.Fatal(err)
			}
			child, err := l.Create(ledger.CreateParams{ParentID: root.ID})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Start(child.ID); err != nil {
				t.Fatal(err)
			}
			before, err := l.Doctor()
			if err != nil || !before.Healthy {
				t.Fatalf("before the damage: %s, %v", reportJSON(t, before), err)
			}
			conn := direct(t, url)
			if _, err := conn.Exec(context.Background(), fmt.Sprintf(tc.damage, pgx.Identifier{schema}.Sanitize())); err != nil {
				t.Fatal(err)
			}
			rep, err := l.Doctor()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Healthy || tc.count(rep) == 0 {
				t.Fatalf("doctor after %s: %s", tc.name, reportJSON(t, rep))
			}
			// Metrics reports the damage, not refuses it: the same
			// doctor, and no stuck counts on storage it cannot trust.
			m, err := ledgerrows.MetricsSeconds(context.Background(), l, 600, 600)
			if err != nil || reportJSON(t, m.Doctor) != reportJSON(t, rep) || (!rep.QuickCheckOK && m.StuckKnown) {
				t.Fatalf("metrics after %s: %+v, %v", tc.name, m, err)
			}
		})
	}
}

func quickCheckFailed(r ledger.DoctorReport) int {
	if !r.QuickCheckOK {
		return 1
	}
	return 0
}

// TestMetricsMatchesSQLite: after the same operations, with a task past
// its deadline, one not updated past the grace and a delivery overdue,
// metrics on both engines report the same, and the stuck counts are those
// a dry-run reconcile reports.
func TestMetricsMatchesSQLite(t *testing.T) {
	ctx := context.Background()
	stuck := func(l *ledger.Ledger, now *float64) ledger.MetricsReport {
		t.Helper()
		doctorSequence(t, l, now)
		short := 10.0
		for i, timeout := range []*float64{&short, nil, nil} {
			id := poolID(10 + i)
			if _, err := l.Create(ledgerrows.WithOptionalTimeoutSeconds(ledger.CreateParams{TaskID: id}, timeout)); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Start(id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.CloseTask(poolID(12), ledger.StatusSucceeded, ledger.CodeCompleted); err != nil {
			t.Fatal(err)
		}
		*now += 900
		rep, err := ledgerrows.MetricsSeconds(ctx, l, 600, 600)
		if err != nil {
			t.Fatal(err)
		}
		dry, err := ledgerrows.ReconcileSeconds(ctx, l, 600, 600, true)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.StuckKnown || rep.RunningPastDeadline != 1 || rep.RunningNotUpdated != 1 || rep.DeliveriesOverdue != dry.DeliveriesFailed+dry.DeliveriesNotApplicable || rep.DeliveriesOverdue == 0 {
			t.Fatalf("metrics %+v; dry run %+v", rep, dry)
		}
		return rep
	}
	url := pgtest.Database(t)
	now := 1_000_000.0
	server := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{testClock: func() float64 { return now }})
	got := stuck(server, &now)

	fileNow := 1_000_000.0
	file, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.sqlite"), ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows}, func() float64 { return fileNow }))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	want := stuck(file, &fileNow)
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("metrics on the server\n%s\non SQLite\n%s", gotJSON, wantJSON)
	}
}
