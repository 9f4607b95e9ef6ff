package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
	"time"
)

// Reconcile reads each row it examines once: the active tasks and the
// terminal pending deliveries stream by through the state indexes, and
// each row is checked against the row rules (rowcheck.go), counted and
// tested against the clock as it passes, without being kept. An apply is
// then one INSERT ... SELECT and one UPDATE per step, each selecting its
// rows with the SQL form of the predicate the pass decided with, and each
// UPDATE must change exactly the rows the pass counted. No per-row Go
// value is kept, so memory does not grow with the ledger.

// reconcileParams are the instants a reconcile compares against, computed
// once in Go so every statement sees the same float values.
type reconcileParams struct {
	now, staleBefore, deliveryCutoff float64
}

// runningStaleSQL is step 1's decision over a tasks row: a running task
// whose deadline has passed or whose last update is at or before
// now - active_grace times out (spec/task-state-guard.md §7.2, first match wins; both
// give a timeout, only the code differs).
const runningStaleSQL = `((deadline_at IS NOT NULL AND deadline_at <= :now) OR updated_at <= :stale)`

// timeoutCodeSQL is the code of a step-1 timeout.
const timeoutCodeSQL = `CASE WHEN deadline_at IS NOT NULL AND deadline_at <= :now THEN '` + codeDeadlineExceeded + `' ELSE '` + codeRestartStale + `' END`

// requiredSQL is true when delivery_required holds a non-zero integer,
// which is what the driver's int64 reading of it took as "required"; any
// other value (only in a damaged file) counts as internal.
const requiredSQL = `(typeof(delivery_required) = 'integer' AND delivery_required <> 0)`

// pendingWhereSQL selects the terminal tasks whose delivery is pending.
const pendingWhereSQL = `delivery_status = 'pending' AND status IN ('succeeded','failed','timed_out','cancelled')`

// pendingClosesSQL is step 2's decision: the delivery closes unless it
// ended after now - delivery_grace (a missing ended_at, only in a damaged
// file, is retained, as SQLite's NULL comparison has it).
const pendingClosesSQL = `(ended_at <= :cutoff)`

// Every row reconcile examines, queued ones included, in storage or index
// order (nothing sorts). SQL selects the rows; Go checks each (rowOK) and
// decides on it (examination.active, examination.pending) as it passes,
// so each row is read once. Two plans select the same rows:
//
//   - through the indexes: the active tasks through tasks_status_idx, the
//     terminal pending deliveries through tasks_delivery_idx; each row
//     then costs a seek into the table;
//   - one scan of the table in storage order, which reads each page once
//     but also passes the rows reconcile does not examine.
//
// examinedShareSQL estimates, through the indexes alone, how many rows
// are examined and how many there are (rowids are dense: tasks are never
// deleted); the scan is taken when more than scanShare of the rows are
// examined. Measured here on the benchmark ledger (20,000 tasks, 70%
// examined), a row reached by a seek costs about twice a row of the scan,
// and a row the scan passes over about a quarter of a sought one, which
// puts the break-even near a quarter. The estimate decides nothing but
// speed: both plans read the same rows and count the same.
var (
	examinedActiveSQL  = `SELECT status = 'queued', ` + taskColumns + ` FROM tasks WHERE status IN ('queued','running')`
	examinedPendingSQL = `SELECT ` + taskColumns + ` FROM tasks WHERE ` + pendingWhereSQL
	examinedScanSQL    = `SELECT CASE status WHEN 'queued' THEN 1 WHEN 'running' THEN 0 END, ` + taskColumns + `
		FROM tasks NOT INDEXED WHERE status IN ('queued','running') OR (` + pendingWhereSQL + `)`
	examinedShareSQL = `SELECT (SELECT count(*) FROM tasks WHERE status IN ('queued','running'))
		+ (SELECT count(*) FROM tasks WHERE delivery_status = 'pending' AND ended_at IS NOT NULL),
		ifnull((SELECT max(rowid) FROM tasks), 0)`
)

// scanShare is the examined fraction above which one table scan serves.
const scanShare = 0.25

// scanPlan decides between the plans: forced ("scan" or "index", tests
// only), else the scan when more than scanShare of rows are examined. Both
// plans give the same answers; the choice is speed only.
func scanPlan(forced string, examined, rows float64) bool {
	return forced == "scan" || (forced == "" && examined > scanShare*rows)
}

// examination is what one pass over the examined rows counts: the report's
// numbers and the clock check (section 5), decided per row exactly as the
// apply's SQL predicates decide (runningStaleSQL, pendingClosesSQL,
// requiredSQL), comparing numbers as SQLite does (sqlCompare).
type examination struct {
	p reconcileParams
	// step 1: the queued and running tasks; the running ones it times
	// out; of those, the ones whose delivery is pending (they join step 2
	// with ended_at = now; a checked row always is) and the required ones
	// among them; the timeouts that would break the clock rule (a created,
	// updated or started time after now); and the joining deliveries whose
	// delivery_updated_at lies after now (a clock conflict only if step 2
	// closes them, which planReconcile decides).
	queued, running, stale, stalePending, stalePendingRequired, staleBackwards, staleDeliveryAfterNow int
	// staleDeadline: the timeouts whose deadline has passed (code
	// deadline_exceeded); the others are restart_stale.
	staleDeadline int
	// step 2: the terminal pending deliveries, those it closes, the
	// required ones among those (failed; the others become not
	// applicable), and the closes that would break the clock rule.
	pending, closes, closeFailed, closeBackwards int
}

// active decides on one checked queued or running row (its columns in
// taskColumns order).
// It reports whether step 1 times the task out.
func (e *examination) active(queued bool, v []driver.Value) (stale bool) {
	if queued {
		e.queued++
		return false
	}
	e.running++
	p := &e.p
	deadline, updated := v[11], v[9]
	if !((deadline != nil && sqlCompare(deadline, p.now) <= 0) || sqlCompare(updated, p.staleBefore) <= 0) {
		return false
	}
	e.stale++
	if deadline != nil && sqlCompare(deadline, p.now) <= 0 {
		e.staleDeadline++
	}
	if sqlCompare(v[7], p.now) > 0 || sqlCompare(updated, p.now) > 0 || (v[8] != nil && sqlCompare(v[8], p.now) > 0) {
		e.staleBackwards++
	}
	if d, _ := v[3].(string); d == string(DeliveryPending) {
		e.stalePending++
		if required(v[4]) {
			e.stalePendingRequired++
		}
		if sqlCompare(v[12], p.now) > 0 {
			e.staleDeliveryAfterNow++
		}
	}
	return true
}

// pendingRow decides on one checked terminal row whose delivery is
// pending, and reports whether step 2 closes it.
func (e *examination) pendingRow(v []driver.Value) (closes bool) {
	e.pending++
	p := &e.p
	ended := v[10]
	if ended == nil || sqlCompare(ended, p.deliveryCutoff) > 0 {
		return false
	}
	e.closes++
	if required(v[4]) {
		e.closeFailed++
	}
	if sqlCompare(ended, p.now) > 0 || sqlCompare(v[12], p.now) > 0 || sqlCompare(v[7], p.now) > 0 {
		e.closeBackwards++
	}
	return true
}

// required is requiredSQL over the driver's value.
func required(v driver.Value) bool {
	r, ok := v.(int64)
	return ok && r != 0
}

// sqlCompare compares a stored number (int64 or float64; the row rules
// admit no other type where it is called) with x as SQLite does: an
// INTEGER and a REAL compare by their exact values, not by the INTEGER
// rounded to a float.
func sqlCompare(v driver.Value, x float64) int {
	switch n := v.(type) {
	case float64:
		return cmp.Compare(n, x)
	case int64:
		switch {
		case x < -9223372036854775808.0:
			return 1
		case x >= 9223372036854775808.0:
			return -1
		}
		if c := cmp.Compare(n, int64(x)); c != 0 {
			return c
		}
		return cmp.Compare(float64(n), x)
	}
	// Unreachable after rowOK; SQLite sorts NULL below and TEXT or BLOB
	// above every number.
	if v == nil {
		return -1
	}
	return 1
}

// examine streams every row reconcile examines once: each is checked
// against the row rules (a row that breaks them makes the whole
// reconcile, dry run included, StateConflict before anything is decided)
// and then counted. The first read (the plan's estimate) fixes the
// transaction's snapshot; only then is the clock sampled (spec/task-state-guard.md §7.1).
// A damaged row outranks a non-finite clock, so the rows are still
// checked when the clock fails.
func examine(t *txn, activeGrace, deliveryGrace float64) (examination, error) {
	var e examination
	var examined, rows float64
	if err := t.QueryRowContext(t.ctx, examinedShareSQL).Scan(&examined, &rows); err != nil {
		return e, err
	}
	now, nowErr := t.now()
	e.p = reconcileParams{now: now, staleBefore: now - activeGrace, deliveryCutoff: now - deliveryGrace}
	if scanPlan(t.l.plans.examine, examined, rows) {
		err := rawQuery(t, examinedScanSQL, 17, func(r []driver.Value) error {
			if !rowOK(r[1:]) {
				return errDamagedRow
			}
			if nowErr == nil {
				if q, ok := r[0].(int64); ok {
					e.active(q == 1, r[1:])
				} else {
					e.pendingRow(r[1:])
				}
			}
			return nil
		})
		if err != nil {
			return e, err
		}
		return e, nowErr
	}
	err := rawQuery(t, examinedActiveSQL, 17, func(r []driver.Value) error {
		if !rowOK(r[1:]) {
			return errDamagedRow
		}
		if nowErr == nil {
			q, _ := r[0].(int64)
			e.active(q == 1, r[1:])
		}
		return nil
	})
	if err != nil {
		return e, err
	}
	err = rawQuery(t, examinedPendingSQL, 16, func(r []driver.Value) error {
		if !rowOK(r) {
			return errDamagedRow
		}
		if nowErr == nil {
			e.pendingRow(r)
		}
		return nil
	})
	if err != nil {
		return e, err
	}
	return e, nowErr
}

// DefaultGrace is the grace Reconcile and Metrics use where the options
// leave one nil: the command line's default of 600 seconds.
const DefaultGrace = 600 * time.Second

// ReconcileOptions are the arguments of Reconcile. The zero value is the
// command line's plain reconcile: both graces 600 s, applied.
//
// A grace is a pointer so that nil (DefaultGrace) and zero (no grace at
// all) are two values: new(time.Duration(0)) asks for none. A negative
// grace is ErrInvalidInput.
type ReconcileOptions struct {
	// ActiveGrace: a running task last updated (started or heartbeat) at
	// least this long ago is timed out (restart_stale); one past its
	// deadline is timed out whatever the grace. Nil means DefaultGrace.
	ActiveGrace *time.Duration
	// DeliveryGrace: a pending delivery whose task ended at least this long
	// ago is settled, failed for a delivery-required task (code
	// delivery_grace_expired) and not_applicable for an internal one.
	// Nil means DefaultGrace.
	DeliveryGrace *time.Duration
	// DryRun makes the same decisions and writes nothing; it works on a
	// read-only ledger.
	DryRun bool

	// seconds are the command line's graces, in place of the two above.
	seconds *graceSeconds
}

// graceSeconds are two graces as the reference takes them: float seconds
// of any finite, non-negative size, zero meaning zero. A Duration stops
// short of 293 years; a float grace does not.
type graceSeconds struct{ active, delivery float64 }

// resolve is the graces to judge with: the command line's seconds, or the
// Durations (nil meaning DefaultGrace) as their nearest floats.
func (g *graceSeconds) resolve(active, delivery *time.Duration) (float64, float64, error) {
	if g != nil {
		if !validSeconds(g.active) || !validSeconds(g.delivery) {
			return 0, 0, invalidInput("grace must be a finite, non-negative number")
		}
		return g.active, g.delivery, nil
	}
	a, okA := durationSeconds(active)
	d, okD := durationSeconds(delivery)
	if !okA || !okD {
		return 0, 0, invalidInput("grace must be a finite, non-negative number")
	}
	return a, d, nil
}

// durationSeconds is a grace as the reconcile reads it; false for a
// negative grace.
func durationSeconds(d *time.Duration) (float64, bool) {
	switch {
	case d == nil:
		return floatseconds.Seconds(DefaultGrace), true
	case *d < 0:
		return 0, false
	}
	// Not d.Seconds(), which adds two rounded floats: a grace of many
	// years could land one float off the one nearest to it.
	return floatseconds.Seconds(*d), true
}

// Reconcile runs restart reconciliation in one transaction: the snapshot
// is read first, then the clock is sampled. A dry run makes the same
// decisions under query_only in a read transaction and writes nothing; it
// works on a read-only ledger. A grace below zero is ErrInvalidInput.
func (l *Ledger) Reconcile(opts ReconcileOptions) (ReconcileReport, error) {
	return l.ReconcileContext(context.Background(), opts)
}

// ReconcileContext is Reconcile with a context whose cancellation or
// deadline ends the wait for another connection's write lock (see
// Concurrency in the package documentation).
func (l *Ledger) ReconcileContext(ctx context.Context, opts ReconcileOptions) (ReconcileReport, error) {
	activeGrace, deliveryGrace, err := opts.seconds.resolve(opts.ActiveGrace, opts.DeliveryGrace)
	if err != nil {
		return ReconcileReport{}, err
	}
	dryRun := opts.DryRun
	if l.server != nil {
		return l.serverReconcile(ctx, activeGrace, deliveryGrace, dryRun)
	}
	var rep ReconcileReport
	run := func(t *txn) error {
		e, err := examine(t, activeGrace, deliveryGrace)
		if err != nil {
			return err
		}
		var plan reconcilePlan
		rep, plan, err = planReconcile(e)
		if err != nil || dryRun {
			return err
		}
		return applyReconcile(t, e.p, plan)
	}
	if dryRun {
		err = l.lockedReadTx(ctx, "dry run", true, run)
	} else {
		if err := l.refuseMutation(ctx); err != nil {
			return ReconcileReport{}, err
		}
		err = l.lockedWrite(ctx, run)
	}
	if err != nil {
		return ReconcileReport{}, err
	}
	rep.DryRun = dryRun
	rep.Applied = !dryRun
	return rep, nil
}

// reconcilePlan is what an apply must write: how many rows each step's
// statements must change.
type reconcilePlan struct {
	timedOut, closed int
}

// planReconcile decides, from the counts over the snapshot at now, the
// report and the number of rows each step changes (spec/task-state-guard.md §7).
func planReconcile(e examination) (ReconcileReport, reconcilePlan, error) {
	var rep ReconcileReport
	closeNotApplicable := e.closes - e.closeFailed
	// The tasks step 1 times out end at now; they join step 2 and close
	// there unless now itself is after the cutoff.
	timedOutClose := !(e.p.now > e.p.deliveryCutoff)
	if e.staleBackwards != 0 || e.closeBackwards != 0 || (timedOutClose && e.staleDeliveryAfterNow != 0) {
		return rep, reconcilePlan{}, errClockBackwards
	}
	rep.ActiveExamined = e.queued + e.running
	rep.TasksTimedOut = e.stale
	rep.FreshActiveRetained = e.queued + e.running - e.stale
	rep.PendingDeliveryExamined = e.pending + e.stalePending
	rep.DeliveriesFailed = e.closeFailed
	rep.DeliveriesNotApplicable = closeNotApplicable
	if timedOutClose {
		rep.DeliveriesFailed += e.stalePendingRequired
		rep.DeliveriesNotApplicable += e.stalePending - e.stalePendingRequired
	}
	rep.PendingDeliveryRetained = rep.PendingDeliveryExamined - rep.DeliveriesFailed - rep.DeliveriesNotApplicable
	return rep, reconcilePlan{timedOut: e.stale, closed: rep.DeliveriesFailed + rep.DeliveriesNotApplicable}, nil
}

// named binds the instants to the statements' named parameters.
func (p reconcileParams) named() []any {
	return []any{sql.Named("now", p.now), sql.Named("stale", p.staleBefore), sql.Named("cutoff", p.deliveryCutoff)}
}

// applyReconcile writes the plan: step 1 appends its events (in step-1
// order, created_at then id) and then times the tasks out; step 2, which
// now sees the tasks step 1 timed out with ended_at = now, appends its
// events (ended_at then id) and then closes the deliveries. Each pair
// selects its rows with the predicate the counts used, in the same
// transaction, so each UPDATE must change exactly the planned number of
// rows. OR FAIL: a failing constraint stops the statement without undoing
// its earlier rows, and the error then rolls the whole transaction back,
// so the outcome is ABORT's; but SQLite needs no statement journal (a
// copy of every page the statement touches).
func applyReconcile(t *txn, p reconcileParams, plan reconcilePlan) error {
	if plan.timedOut > 0 {
		if _, err := t.ExecContext(t.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT id, '`+eventTaskTransition+`', '`+string(StatusRunning)+`', '`+string(StatusTimedOut)+`', :now, `+timeoutCodeSQL+`
			FROM tasks WHERE status = 'running' AND `+runningStaleSQL+` ORDER BY created_at, id`, p.named()...); err != nil {
			return err
		}
		res, err := t.ExecContext(t.ctx, `UPDATE OR FAIL tasks SET status = '`+string(StatusTimedOut)+`', updated_at = :now, ended_at = :now,
			terminal_code = `+timeoutCodeSQL+`, version = version + 1
			WHERE status = 'running' AND `+runningStaleSQL, p.named()...)
		if err := wantChanged(res, err, plan.timedOut); err != nil {
			return err
		}
	}
	if plan.closed > 0 {
		to := `CASE WHEN ` + requiredSQL + ` THEN '` + string(DeliveryFailed) + `' ELSE '` + string(DeliveryNotApplicable) + `' END`
		code := `CASE WHEN ` + requiredSQL + ` THEN '` + codeGraceExpired + `' ELSE '` + codeInternalTask + `' END`
		if _, err := t.ExecContext(t.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT id, '`+eventDeliveryTransition+`', '`+string(DeliveryPending)+`', `+to+`, :now, `+code+`
			FROM tasks WHERE `+pendingWhereSQL+` AND `+pendingClosesSQL+` ORDER BY ended_at, id`, p.named()...); err != nil {
			return err
		}
		res, err := t.ExecContext(t.ctx, `UPDATE OR FAIL tasks SET delivery_status = `+to+`, delivery_updated_at = :now,
			delivery_code = `+code+`, version = version + 1
			WHERE `+pendingWhereSQL+` AND `+pendingClosesSQL, p.named()...)
		if err := wantChanged(res, err, plan.closed); err != nil {
			return err
		}
	}
	return nil
}

// wantChanged passes a statement's error on, and fails when it changed
// another number of rows than planned.
func wantChanged(res sql.Result, err error, want int) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(want) {
		return internal("reconcile apply", errOrMismatch(err))
	}
	return nil
}
