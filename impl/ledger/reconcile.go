package ledger

import (
	"database/sql"
	"database/sql/driver"
)

// Reconcile works set-based: every row it examines streams once through
// the row rules (rowcheck.go) without being kept, the report's counts and
// the clock check are aggregate queries over the running and
// pending-delivery rows (through the state indexes), and an apply is one
// INSERT ... SELECT and one UPDATE per step, each selecting its rows with
// the same predicate the counts used. No per-row Go value is kept, so
// memory does not grow with the ledger.

// reconcileParams are the instants a reconcile compares against, computed
// once in Go so every statement sees the same float values.
type reconcileParams struct {
	now, staleBefore, deliveryCutoff float64
}

// runningStaleSQL is step 1's decision over a tasks row: a running task
// whose deadline has passed or whose last update is at or before
// now - active_grace times out (contract §7.2, first match wins; both
// give a timeout, only the code differs).
const runningStaleSQL = `((deadline_at IS NOT NULL AND deadline_at <= :now) OR updated_at <= :stale)`

// timeoutCodeSQL is the code of a step-1 timeout.
const timeoutCodeSQL = `CASE WHEN deadline_at IS NOT NULL AND deadline_at <= :now THEN '` + codeDeadlineExceeded + `' ELSE '` + codeRestartStale + `' END`

// requiredSQL is true when delivery_required holds a non-zero integer,
// which is what the driver's int64 reading of it took as "required"; any
// other value (only in a damaged file) counts as internal.
const requiredSQL = `(typeof(delivery_required) = 'integer' AND delivery_required <> 0)`

// runningCountsSQL counts the running tasks, those step 1 times out, those
// of them whose stored delivery is pending (they join step 2 with
// ended_at = now; a checked row always is) and, of those, the required
// ones; then the timeouts that would break the clock rule (a created,
// updated or started time after now), and the joining deliveries whose
// delivery_updated_at lies after now (a clock conflict only if step 2
// closes them, which the caller decides).
var runningCountsSQL = `SELECT count(*),
	ifnull(sum(` + runningStaleSQL + `), 0),
	ifnull(sum(` + runningStaleSQL + ` AND delivery_status = 'pending'), 0),
	ifnull(sum(` + runningStaleSQL + ` AND delivery_status = 'pending' AND ` + requiredSQL + `), 0),
	ifnull(sum(` + runningStaleSQL + ` AND (:now < created_at OR :now < updated_at OR ifnull(:now < started_at, 0))), 0),
	ifnull(sum(` + runningStaleSQL + ` AND delivery_status = 'pending' AND :now < delivery_updated_at), 0)
	FROM tasks WHERE status = 'running'`

// pendingWhereSQL selects the terminal tasks whose delivery is pending.
const pendingWhereSQL = `delivery_status = 'pending' AND status IN ('succeeded','failed','timed_out','cancelled')`

// pendingClosesSQL is step 2's decision: the delivery closes unless it
// ended after now - delivery_grace (a missing ended_at, only in a damaged
// file, is retained, as SQLite's NULL comparison has it).
const pendingClosesSQL = `(ended_at <= :cutoff)`

// pendingCountsSQL counts the terminal pending deliveries, those step 2
// closes and, of those, the required ones (failed; the others become not
// applicable), and the closes that would break the clock rule.
var pendingCountsSQL = `SELECT count(*),
	ifnull(sum(` + pendingClosesSQL + `), 0),
	ifnull(sum(` + pendingClosesSQL + ` AND ` + requiredSQL + `), 0),
	ifnull(sum(` + pendingClosesSQL + ` AND (:now < ended_at OR :now < delivery_updated_at OR :now < created_at)), 0)
	FROM tasks WHERE ` + pendingWhereSQL

// Every row reconcile examines, queued ones included, in storage or index
// order (nothing sorts): the active tasks through tasks_status_idx, the
// terminal pending deliveries through tasks_delivery_idx.
var (
	examinedActiveSQL  = `SELECT status = 'queued', ` + taskColumns + ` FROM tasks WHERE status IN ('queued','running')`
	examinedPendingSQL = `SELECT ` + taskColumns + ` FROM tasks WHERE ` + pendingWhereSQL
)

// checkExaminedRows streams every row reconcile examines through the row
// rules and keeps none: a row that breaks them makes the whole reconcile,
// dry run included, StateConflict before anything is decided. It returns
// the number of queued tasks (always retained, so only counted).
func checkExaminedRows(t *txn) (queued int, err error) {
	err = rawQuery(t, examinedActiveSQL, 17, func(r []driver.Value) error {
		if q, _ := r[0].(int64); q == 1 {
			queued++
		}
		if !rowOK(r[1:]) {
			return errDamagedRow
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	err = rawQuery(t, examinedPendingSQL, 16, func(r []driver.Value) error {
		if !rowOK(r) {
			return errDamagedRow
		}
		return nil
	})
	return queued, err
}

// Reconcile runs restart reconciliation in one transaction: the snapshot
// is read first, then the clock is sampled. A dry run makes the same
// decisions under query_only in a read transaction and writes nothing; it
// works on a read-only ledger.
func (l *Ledger) Reconcile(activeGrace, deliveryGrace float64, dryRun bool) (ReconcileReport, error) {
	if !validSeconds(activeGrace) || !validSeconds(deliveryGrace) {
		return ReconcileReport{}, invalidInput("grace must be a finite, non-negative number")
	}
	var rep ReconcileReport
	run := func(t *txn) error {
		// The first read fixes the transaction's snapshot; only then is
		// the clock sampled (contract §7.1).
		queued, err := checkExaminedRows(t)
		if err != nil {
			return err
		}
		now, err := t.now()
		if err != nil {
			return err
		}
		p := reconcileParams{now: now, staleBefore: now - activeGrace, deliveryCutoff: now - deliveryGrace}
		var plan reconcilePlan
		rep, plan, err = planReconcile(t, p, queued)
		if err != nil || dryRun {
			return err
		}
		return applyReconcile(t, p, plan)
	}
	var err error
	if dryRun {
		err = l.lockedReadTx("dry run", true, run)
	} else {
		if l.readOnly {
			return ReconcileReport{}, errReadOnly
		}
		err = l.lockedWrite(run)
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

// planReconcile decides, from aggregate queries over the snapshot and now,
// the report and the number of rows each step changes (contract §7).
func planReconcile(t *txn, p reconcileParams, queued int) (ReconcileReport, reconcilePlan, error) {
	var rep ReconcileReport
	var running, stale, stalePending, stalePendingRequired, staleBackwards, staleDeliveryAfterNow int
	if err := t.QueryRowContext(t.ctx, runningCountsSQL, p.named()...).Scan(&running, &stale, &stalePending,
		&stalePendingRequired, &staleBackwards, &staleDeliveryAfterNow); err != nil {
		return rep, reconcilePlan{}, err
	}
	var pending, closes, closeFailed, closeBackwards int
	if err := t.QueryRowContext(t.ctx, pendingCountsSQL, p.named()...).Scan(&pending, &closes, &closeFailed,
		&closeBackwards); err != nil {
		return rep, reconcilePlan{}, err
	}
	closeNotApplicable := closes - closeFailed
	// The tasks step 1 times out end at now; they join step 2 and close
	// there unless now itself is after the cutoff.
	timedOutClose := !(p.now > p.deliveryCutoff)
	if staleBackwards != 0 || closeBackwards != 0 || (timedOutClose && staleDeliveryAfterNow != 0) {
		return rep, reconcilePlan{}, errClockBackwards
	}
	rep.ActiveExamined = queued + running
	rep.TasksTimedOut = stale
	rep.FreshActiveRetained = queued + running - stale
	rep.PendingDeliveryExamined = pending + stalePending
	rep.DeliveriesFailed = closeFailed
	rep.DeliveriesNotApplicable = closeNotApplicable
	if timedOutClose {
		rep.DeliveriesFailed += stalePendingRequired
		rep.DeliveriesNotApplicable += stalePending - stalePendingRequired
	}
	rep.PendingDeliveryRetained = rep.PendingDeliveryExamined - rep.DeliveriesFailed - rep.DeliveriesNotApplicable
	return rep, reconcilePlan{timedOut: stale, closed: rep.DeliveriesFailed + rep.DeliveriesNotApplicable}, nil
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
			SELECT id, '`+eventTaskTransition+`', '`+StatusRunning+`', '`+StatusTimedOut+`', :now, `+timeoutCodeSQL+`
			FROM tasks WHERE status = 'running' AND `+runningStaleSQL+` ORDER BY created_at, id`, p.named()...); err != nil {
			return err
		}
		res, err := t.ExecContext(t.ctx, `UPDATE OR FAIL tasks SET status = '`+StatusTimedOut+`', updated_at = :now, ended_at = :now,
			terminal_code = `+timeoutCodeSQL+`, version = version + 1
			WHERE status = 'running' AND `+runningStaleSQL, p.named()...)
		if err := wantChanged(res, err, plan.timedOut); err != nil {
			return err
		}
	}
	if plan.closed > 0 {
		to := `CASE WHEN ` + requiredSQL + ` THEN '` + DeliveryFailed + `' ELSE '` + DeliveryNotApplicable + `' END`
		code := `CASE WHEN ` + requiredSQL + ` THEN '` + codeGraceExpired + `' ELSE '` + codeInternalTask + `' END`
		if _, err := t.ExecContext(t.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT id, '`+eventDeliveryTransition+`', '`+DeliveryPending+`', `+to+`, :now, `+code+`
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
