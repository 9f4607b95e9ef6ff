package ledger

import (
	"context"
	"strings"
	"testing"
)

// TestReconcileBoundaries pins the comparisons of spec/task-state-guard.md §7: deadline_at
// <= now times out, updated_at <= now - grace is stale, and ended_at > now
// - grace is retained.
func TestReconcileBoundaries(t *testing.T) {
	l, clk, _ := openTest(t)
	atDeadline, _ := l.Create(timeoutSeconds(CreateParams{}, 100))
	atGrace, _ := l.Create(CreateParams{})
	fresh, _ := l.Create(CreateParams{})
	l.Start(atDeadline.ID) // deadline 1100
	l.Start(atGrace.ID)    // updated 1000
	clk.now = 1001
	l.Start(fresh.ID) // updated 1001
	clk.now = 1100
	rep, err := l.reconcileFloat(100, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	// atDeadline: deadline 1100 <= 1100; atGrace: 1000 <= 1100-100; fresh:
	// 1001 > 1000. Both timed-out deliveries end at now: with grace 0,
	// now > now is false, so they fail.
	if rep.TasksTimedOut != 2 || rep.FreshActiveRetained != 1 || rep.DeliveriesFailed != 2 || rep.PendingDeliveryRetained != 0 {
		t.Fatalf("%+v", rep)
	}
	applied, err := l.reconcileFloat(100, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if applied.TasksTimedOut != 2 || applied.DeliveriesFailed != 2 {
		t.Fatalf("%+v", applied)
	}
	got, _ := l.Get(atDeadline.ID)
	if got.TerminalCode != "deadline_exceeded" || got.DeliveryCode != "delivery_grace_expired" || got.Version != 3 {
		t.Fatalf("%+v", got)
	}
	got, _ = l.Get(atGrace.ID)
	if got.TerminalCode != "restart_stale" {
		t.Fatalf("%+v", got)
	}
	healthy(t, l)
	// A delivery that ended exactly grace seconds ago is closed; one that
	// ended later is retained.
	clk.now = 1200
	l.CloseTask(fresh.ID, StatusSucceeded, "")
	clk.now = 1300
	if rep, _ := l.reconcileFloat(100, 100.5, true); rep.PendingDeliveryRetained != 1 {
		t.Fatalf("%+v", rep)
	}
	if rep, _ := l.reconcileFloat(100, 100, true); rep.DeliveriesFailed != 1 {
		t.Fatalf("%+v", rep)
	}
}

// TestReconcileWrongTypes damages one value per case (written with CHECK
// constraints and foreign keys off) and requires what spec/task-state-guard.md §7's
// implementation decisions state: a value reconcile reads that has the
// wrong type makes the dry run and the apply StateConflict, with nothing
// written; odd values of the right type pass when the row still obeys the
// doctor's row rules. Queued tasks are always retained, yet their rows are
// checked too, so they get most cases.
func TestReconcileWrongTypes(t *testing.T) {
	cases := []struct {
		name, set, target string
		ok                bool
	}{
		{"clean", "version = version", "q", true},
		{"queued created text", "created_at = 'x'", "q", false},
		{"queued updated blob", "updated_at = X'00'", "q", false},
		{"queued started text", "started_at = 'x'", "q", false},
		{"queued deadline infinite", "deadline_at = 9e999", "q", false},
		{"queued created minus infinity", "created_at = -9e999", "q", false},
		{"queued id null", "id = NULL", "q", false},
		{"queued started finite", "started_at = 999.5", "q", false},
		{"queued id blob", "id = CAST(id AS BLOB)", "q", true},
		{"running created text", "created_at = 'x'", "r", false},
		{"running deadline infinite", "deadline_at = 9e999", "r", false},
		{"pending ended text", "ended_at = 'x'", "c", false},
		{"pending ended infinite", "ended_at = 9e999", "c", false},
		{"pending delivery time blob", "delivery_updated_at = X'00'", "c", false},
		{"pending created integer", "created_at = CAST(created_at AS INTEGER)", "c", true},
		{"running started blob", "started_at = X'00'", "r", false},
		{"running id blob", "id = CAST(id AS BLOB)", "r", true},
		{"running updated minus infinity", "updated_at = -9e999", "r", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, clk, _ := openTest(t)
			q, _ := l.Create(CreateParams{})
			r, _ := l.Create(CreateParams{})
			done, _ := l.Create(CreateParams{Internal: true})
			l.Start(r.ID)
			l.CloseTask(done.ID, StatusSucceeded, "")
			ids := map[string]string{"q": q.ID, "r": r.ID, "c": done.ID}
			ctx := context.Background()
			for _, s := range []string{
				"PRAGMA ignore_check_constraints = 1", "PRAGMA foreign_keys = OFF",
				"UPDATE tasks SET " + c.set + " WHERE id = '" + ids[c.target] + "'",
				"PRAGMA ignore_check_constraints = 0", "PRAGMA foreign_keys = ON",
			} {
				if _, err := l.conn.ExecContext(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			clk.now = 5000
			for _, dry := range []bool{true, false} {
				rep, err := l.reconcileFloat(600, 600, dry)
				if c.ok {
					if err != nil || rep.ActiveExamined != 2 || rep.TasksTimedOut != 1 || rep.DeliveriesNotApplicable != 1 {
						t.Fatalf("dry run %v: %+v %v", dry, rep, err)
					}
					continue
				}
				wantClass(t, err, ErrStateConflict)
			}
			if !c.ok {
				var status string
				if err := l.conn.QueryRowContext(ctx, "SELECT status FROM tasks WHERE rowid = 2").Scan(&status); err != nil || status != string(StatusRunning) {
					t.Fatalf("refused apply wrote: %q %v", status, err)
				}
			}
		})
	}
}

// TestReconcileDamagedRunningDelivery: a running task whose delivery is
// already closed, or whose delivery time moved, breaks the row rules (a
// delivery closes only after its task ends; a pending delivery keeps its
// creation time). Reconcile examines every running row, so the dry run and
// the apply both refuse with StateConflict and the apply writes nothing.
func TestReconcileDamagedRunningDelivery(t *testing.T) {
	for _, set := range []string{
		"delivery_status = 'failed', delivery_code = 'transport_failed'",
		"delivery_updated_at = 9000",
	} {
		t.Run(set, func(t *testing.T) {
			l, clk, _ := openTest(t)
			r, _ := l.Create(CreateParams{})
			if _, err := l.Start(r.ID); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := l.conn.ExecContext(ctx, "UPDATE tasks SET "+set+" WHERE id = ?", r.ID); err != nil {
				t.Fatal(err)
			}
			clk.now = 5000
			_, derr := l.reconcileFloat(600, 0, true)
			_, aerr := l.reconcileFloat(600, 0, false)
			wantClass(t, derr, ErrStateConflict)
			wantClass(t, aerr, ErrStateConflict)
			var status string
			var version, events int
			l.conn.QueryRowContext(ctx, "SELECT status, version FROM tasks WHERE id = ?", r.ID).Scan(&status, &version)
			l.conn.QueryRowContext(ctx, "SELECT count(*) FROM task_events WHERE task_id = ?", r.ID).Scan(&events)
			if status != string(StatusRunning) || version != 1 || events != 2 {
				t.Fatalf("refused apply wrote: %s v%d, %d events", status, version, events)
			}
		})
	}
}

// TestReconcileEventOrder pins the order of the events an apply appends
// (spec/task-state-guard.md §7.3a): step-1 timeouts by created_at then id, then step-2
// delivery closes by ended_at then id, the tasks step 1 just timed out
// (ended at now) among them.
func TestReconcileEventOrder(t *testing.T) {
	l, clk, _ := openTest(t)
	id := func(c byte) string {
		return strings.Repeat(string(c), 8) + "-0000-4000-8000-" + strings.Repeat(string(c), 12)
	}
	create := func(name byte) {
		if _, err := l.Create(CreateParams{TaskID: id(name), Internal: name == 'b'}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Start(id(name)); err != nil {
			t.Fatal(err)
		}
		clk.now++
	}
	// Created in the order a, b, f, 0; b and a close (b ended first); f
	// and 0 stay running, so step 1 times out f before 0 (created order)
	// and step 2 closes b, a, then 0 before f (both ended at now: id order).
	for _, name := range []byte{'a', 'b', 'f', '0'} {
		create(name)
	}
	clk.now = 1100
	l.CloseTask(id('b'), StatusSucceeded, "")
	clk.now = 1200
	l.CloseTask(id('a'), StatusSucceeded, "")
	clk.now = 5000
	var last int64
	ctx := context.Background()
	if err := l.conn.QueryRowContext(ctx, "SELECT max(sequence) FROM task_events").Scan(&last); err != nil {
		t.Fatal(err)
	}
	if _, err := l.reconcileFloat(600, 0, false); err != nil {
		t.Fatal(err)
	}
	rows, err := l.conn.QueryContext(ctx, "SELECT task_id, to_value, code FROM task_events WHERE sequence > ? ORDER BY sequence", last)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var task, to, code string
		if err := rows.Scan(&task, &to, &code); err != nil {
			t.Fatal(err)
		}
		got = append(got, task[:1]+" "+to+" "+code)
	}
	want := []string{
		"f timed_out restart_stale", "0 timed_out restart_stale",
		"b not_applicable internal_task", "a failed delivery_grace_expired",
		"0 failed delivery_grace_expired", "f failed delivery_grace_expired",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	healthy(t, l)
}

// TestScanPlanChoice: the table scan is taken above a quarter of the rows
// examined, the index walk at or below it, unless a test forces one.
func TestScanPlanChoice(t *testing.T) {
	cases := []struct {
		forced         string
		examined, rows float64
		scan           bool
	}{
		{"", 26, 100, true},
		{"", 25, 100, false},
		{"", 0, 0, false},
		{"", 1, 0, true},
		{"scan", 0, 100, true},
		{"index", 100, 100, false},
	}
	for _, c := range cases {
		if got := scanPlan(c.forced, c.examined, c.rows); got != c.scan {
			t.Errorf("scanPlan(%q, %v, %v) = %v, want %v", c.forced, c.examined, c.rows, got, c.scan)
		}
	}
}

// TestReconcileApplyFailureChangesNothing: when one of the apply's
// statements fails (a temporary trigger on this connection stands for an
// I/O failure; the file's schema is untouched), reconcile answers the
// failure and the transaction leaves every row and event as it was, the
// timed-out tasks' events and updates included.
func TestReconcileApplyFailureChangesNothing(t *testing.T) {
	for _, step := range []string{"status", "delivery_status"} {
		t.Run(step, func(t *testing.T) {
			l, clk, _ := openTest(t)
			running, _ := l.Create(CreateParams{})
			if _, err := l.Start(running.ID); err != nil {
				t.Fatal(err)
			}
			done, _ := l.Create(CreateParams{})
			if _, err := l.CloseTask(done.ID, StatusSucceeded, ""); err != nil {
				t.Fatal(err)
			}
			clk.now = 5000
			if rep, err := l.reconcileFloat(600, 600, true); err != nil || rep.TasksTimedOut != 1 || rep.DeliveriesFailed != 1 {
				t.Fatalf("dry run: %+v %v", rep, err)
			}
			if _, err := l.conn.ExecContext(context.Background(), `CREATE TEMP TRIGGER refuse BEFORE UPDATE OF `+step+
				` ON main.tasks BEGIN SELECT RAISE(FAIL, 'refused'); END`); err != nil {
				t.Fatal(err)
			}
			before := dumpRows(t, l)
			if rep, err := l.reconcileFloat(600, 600, false); err == nil {
				t.Fatalf("apply with its %s update failing: %+v, want an error", step, rep)
			}
			if after := dumpRows(t, l); after != before {
				t.Fatalf("a failed apply changed the ledger:\n%s\nwant\n%s", after, before)
			}
			if _, err := l.conn.ExecContext(context.Background(), `DROP TRIGGER temp.refuse`); err != nil {
				t.Fatal(err)
			}
			healthy(t, l)
		})
	}
}
