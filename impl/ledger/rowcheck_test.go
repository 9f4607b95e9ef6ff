package ledger

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// rowDamage is one hand edit of one task row, made with CHECK constraints
// and foreign keys off, as a plain SQLite client can.
type rowDamage struct {
	name, target, set string
	// reconciled: reconcile examines the damaged row (an active task, or a
	// terminal one whose delivery is pending), so it must refuse too.
	reconciled bool
}

// planted is free text a damaged row carries; it must never come back.
const planted = "call me at 555-0100"

// rowDamages are the five kinds of damage the reference ledger was seen
// to refuse, plus free text planted in a code column.
var rowDamages = []rowDamage{
	{"unregistered terminal code", "failed", "terminal_code = 'reason_x'", true},
	{"updated before created", "running", "updated_at = created_at - 1", true},
	{"queued with ended_at", "queued", "ended_at = created_at", true},
	{"version too low", "failed", "version = 1", true},
	{"internal task delivered", "internal", "delivery_status = 'delivered', delivery_updated_at = ended_at", false},
	{"free text as a code", "internal", "terminal_code = '" + planted + "'", true},
}

// damagedLedger holds a root task and four children (queued, running,
// failed with a pending delivery, internal cancelled with a pending
// delivery), all healthy, at clock 1000..1020; the clock is then 5000.
func damagedLedger(t *testing.T) (*Ledger, map[string]Task) {
	t.Helper()
	l, clk, _ := openTest(t)
	must := func(task Task, err error) Task {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	root := must(l.Create(CreateParams{}))
	tasks := map[string]Task{"root": root}
	for _, role := range []string{"queued", "running", "failed", "internal"} {
		tasks[role] = must(l.Create(timeoutSeconds(CreateParams{ParentID: root.ID, Internal: role == "internal"}, 60)))
	}
	clk.now = 1010
	must(l.Start(tasks["running"].ID))
	must(l.Start(tasks["failed"].ID))
	clk.now = 1020
	tasks["failed"] = must(l.CloseTask(tasks["failed"].ID, StatusFailed, "worker_failed"))
	tasks["internal"] = must(l.CloseTask(tasks["internal"].ID, StatusCancelled, ""))
	clk.now = 5000
	healthy(t, l)
	return l, tasks
}

// damageRow applies one edit behind the ledger's back.
func damageRow(t *testing.T, l *Ledger, id, set string) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []string{
		"PRAGMA ignore_check_constraints = 1", "PRAGMA foreign_keys = OFF",
		"UPDATE tasks SET " + set + " WHERE id = '" + id + "'",
		"PRAGMA ignore_check_constraints = 0", "PRAGMA foreign_keys = ON",
	} {
		if _, err := l.conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
}

// dumpRows renders every task and event row, every value quoted by SQLite
// itself, so that any write shows.
func dumpRows(t *testing.T, l *Ledger) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT quote(id)||quote(parent_id)||quote(status)||quote(delivery_status)||quote(delivery_required)||quote(payload_hash)||
			quote(timeout_seconds)||quote(created_at)||quote(started_at)||quote(updated_at)||quote(ended_at)||quote(deadline_at)||
			quote(delivery_updated_at)||quote(terminal_code)||quote(delivery_code)||quote(version) FROM tasks ORDER BY rowid`,
		`SELECT quote(sequence)||quote(task_id)||quote(event_kind)||quote(from_value)||quote(to_value)||quote(occurred_at)||quote(code)
			FROM task_events ORDER BY sequence`,
	} {
		rows, err := l.conn.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s + "\n")
		}
		rows.Close()
	}
	return b.String()
}

// TestDamagedRowsAreRefused: every operation that reads the damaged row
// answers StateConflict, writes nothing and never carries the row's text;
// rows around it still work, and the doctor still reports (unhealthy).
func TestDamagedRowsAreRefused(t *testing.T) {
	for _, d := range rowDamages {
		t.Run(d.name, func(t *testing.T) {
			l, tasks := damagedLedger(t)
			target := tasks[d.target]
			damageRow(t, l, target.ID, d.set)
			before := dumpRows(t, l)

			otherDelivery := DeliveryFailed
			if !target.DeliveryRequired {
				otherDelivery = DeliveryNotApplicable
			}
			type op struct {
				name string
				run  func() error
			}
			ops := []op{
				{"get", func() error { _, err := l.Get(target.ID); return err }},
				{"children", func() error { _, err := l.ChildrenOf(target.ID); return err }},
				{"history", func() error { _, err := l.History(target.ID); return err }},
				{"children of the parent", func() error { _, err := l.ChildrenOf(tasks["root"].ID); return err }},
				{"start", func() error { _, err := l.Start(target.ID); return err }},
				{"heartbeat", func() error { _, err := l.Heartbeat(target.ID); return err }},
				{"close", func() error { _, err := l.CloseTask(target.ID, StatusTimedOut, ""); return err }},
				{"delivery", func() error { _, err := l.SetDelivery(target.ID, otherDelivery, ""); return err }},
				{"delivery, delivered", func() error { _, err := l.SetDelivery(target.ID, DeliveryDelivered, ""); return err }},
				{"create, same id", func() error {
					_, err := l.Create(CreateParams{TaskID: target.ID, ParentID: *target.ParentID,
						Internal: !target.DeliveryRequired, Timeout: target.Timeout})
					return err
				}},
				{"create under it", func() error {
					_, err := l.Create(CreateParams{ParentID: target.ID})
					return err
				}},
			}
			if isTerminal(target.Status) {
				// The idempotent repeat, which returns the stored row.
				ops = append(ops, op{"close, same status", func() error { _, err := l.CloseTask(target.ID, target.Status, ""); return err }})
			}
			if d.reconciled {
				// Under both plans of the examining pass (reconcile.go).
				for _, plan := range []string{"index", "scan"} {
					ops = append(ops,
						op{"reconcile dry run, " + plan, func() error {
							l.plans.examine = plan
							defer func() { l.plans.examine = "" }()
							_, err := l.reconcileFloat(600, 600, true)
							return err
						}},
						op{"reconcile, " + plan, func() error {
							l.plans.examine = plan
							defer func() { l.plans.examine = "" }()
							_, err := l.reconcileFloat(600, 600, false)
							return err
						}})
				}
			}
			for _, o := range ops {
				err := o.run()
				if !errors.Is(err, ErrStateConflict) {
					t.Errorf("%s: %v, want StateConflict", o.name, err)
				} else if strings.Contains(err.Error(), planted) || strings.Contains(err.Error(), target.ID) {
					t.Errorf("%s: the error carries a stored value: %v", o.name, err)
				}
			}
			if after := dumpRows(t, l); after != before {
				t.Errorf("a refused operation wrote\nbefore %s\nafter  %s", before, after)
			}

			// Healthy rows are still read and written.
			if _, err := l.Get(tasks["root"].ID); err != nil {
				t.Errorf("get of a healthy row: %v", err)
			}
			if !d.reconciled {
				if _, err := l.reconcileFloat(600, 600, true); err != nil {
					t.Errorf("a dry run that does not examine the damaged row: %v", err)
				}
			}
			rep, err := l.Doctor()
			if err != nil || rep.Healthy || rep.StateInconsistencyCount+rep.TimestampInconsistencyCount == 0 {
				t.Errorf("doctor: %s %v", reportJSON(rep), err)
			}
		})
	}
}

// TestStoredTypesAreRefused: a value of a type no rule admits (text in a
// REAL column, a real in the version) is a damaged row too, not an
// internal error.
func TestStoredTypesAreRefused(t *testing.T) {
	for _, set := range []string{"created_at = 'yesterday'", "version = 1.5", "delivery_required = 'yes'", "status = 7"} {
		t.Run(set, func(t *testing.T) {
			l, tasks := damagedLedger(t)
			damageRow(t, l, tasks["running"].ID, set)
			_, err := l.Get(tasks["running"].ID)
			wantClass(t, err, ErrStateConflict)
		})
	}
}
