package ledger

import (
	"cmp"
	"database/sql"
	"database/sql/driver"
	"math"
	"slices"
	"strconv"
	"strings"
)

// reconcileRunning is a running task as reconciliation sees it. rowid is
// the row's SQLite rowid, which the apply step updates by: a lookup by
// the TEXT primary key costs an extra index search per row.
type reconcileRunning struct {
	rowid             int64
	id                string
	required          bool
	created, updated  float64
	started, deadline *float64
	// A running task's delivery is pending (a checked row has no closed
	// delivery before its task ends), and step 2 compares its time.
	deliveryUpdated float64
}

// reconcilePending is a terminal task whose delivery is still pending.
type reconcilePending struct {
	rowid           int64
	id              string
	required        bool
	created         float64
	ended           *float64
	deliveryUpdated float64
}

// reconcileChange is one write the plan would make.
type reconcileChange struct {
	rowid    int64
	code     string
	delivery bool   // false: task times out; true: delivery closes
	to       string // delivery target when delivery is true
}

// planReconcile decides, as a pure function of the snapshot and now, what
// restart reconciliation does (contract §5). Queued tasks are always
// retained, so only their number matters. Changes are in write order.
func planReconcile(queued int, running []reconcileRunning, pending []reconcilePending, now, activeGrace, deliveryGrace float64) (ReconcileReport, []reconcileChange, error) {
	var rep ReconcileReport
	changes := make([]reconcileChange, 0, 2*len(running)+len(pending))
	rep.ActiveExamined = queued
	rep.FreshActiveRetained = queued
	staleBefore := now - activeGrace
	endedNow := now // shared: every task timed out here ends at now
	timedOut := make([]reconcilePending, 0, len(running))
	for _, a := range running {
		rep.ActiveExamined++
		code := ""
		switch {
		case a.deadline != nil && *a.deadline <= now:
			code = codeDeadlineExceeded
		case a.updated <= staleBefore:
			code = codeRestartStale
		}
		if code == "" {
			rep.FreshActiveRetained++
			continue
		}
		if err := notBefore(now, a.created, a.updated); err != nil {
			return rep, nil, err
		}
		if a.started != nil {
			if err := notBefore(now, *a.started); err != nil {
				return rep, nil, err
			}
		}
		rep.TasksTimedOut++
		changes = append(changes, reconcileChange{rowid: a.rowid, code: code})
		timedOut = append(timedOut, reconcilePending{rowid: a.rowid, id: a.id, required: a.required, created: a.created, ended: &endedNow, deliveryUpdated: a.deliveryUpdated})
	}
	// The tasks just timed out join the pending deliveries, in the same
	// (ended_at, id) order a second query after the first step would see.
	all := slices.Concat(pending, timedOut)
	slices.SortStableFunc(all, func(a, b reconcilePending) int {
		if c := cmp.Compare(endedKey(&a), endedKey(&b)); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	deliveryCutoff := now - deliveryGrace
	for _, p := range all {
		rep.PendingDeliveryExamined++
		if p.ended == nil || *p.ended > deliveryCutoff {
			rep.PendingDeliveryRetained++
			continue
		}
		if err := notBefore(now, *p.ended, p.deliveryUpdated, p.created); err != nil {
			return rep, nil, err
		}
		if p.required {
			rep.DeliveriesFailed++
			changes = append(changes, reconcileChange{rowid: p.rowid, delivery: true, to: DeliveryFailed, code: codeGraceExpired})
		} else {
			rep.DeliveriesNotApplicable++
			changes = append(changes, reconcileChange{rowid: p.rowid, delivery: true, to: DeliveryNotApplicable, code: codeInternalTask})
		}
	}
	return rep, changes, nil
}

// endedKey orders a missing ended_at (only in a damaged file) first, as
// SQLite orders NULL first.
func endedKey(p *reconcilePending) float64 {
	if p.ended == nil {
		return math.Inf(-1)
	}
	return *p.ended
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
		queued, running, pending, err := reconcileSnapshot(t)
		if err != nil {
			return err
		}
		now, err := t.now()
		if err != nil {
			return err
		}
		var changes []reconcileChange
		rep, changes, err = planReconcile(queued, running, pending, now, activeGrace, deliveryGrace)
		if err != nil || dryRun {
			return err
		}
		return applyReconcile(t, changes, now)
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

// reconcileSnapshot reads the queued count, the running tasks and the
// pending-delivery tasks: every row reconcile examines, each checked by
// taskFromRow, so a damaged one makes the whole reconcile StateConflict
// (dry run included) before anything is decided or written. Queued tasks
// are always retained, so only their number is kept.
func reconcileSnapshot(t *txn) (queued int, running []reconcileRunning, pending []reconcilePending, err error) {
	// Sizing the slices up front (two index-only counts, the second an
	// upper bound) avoids copying them as they grow, which on a large
	// ledger costs more than the counts.
	var runningCap, pendingCap int
	if err := t.QueryRowContext(t.ctx, `SELECT (SELECT count(*) FROM tasks WHERE status = 'running'),
		(SELECT count(*) FROM tasks WHERE delivery_status = 'pending')`).Scan(&runningCap, &pendingCap); err != nil {
		return 0, nil, nil, err
	}
	running = make([]reconcileRunning, 0, runningCap)
	pending = make([]reconcilePending, 0, pendingCap)
	err = rawQuery(t, `SELECT `+taskColumns+` FROM tasks WHERE status = 'queued'`, 16, func(r []driver.Value) error {
		queued++
		if !rowOK(r) {
			return errDamagedRow
		}
		return nil
	})
	if err != nil {
		return 0, nil, nil, err
	}
	err = rawQuery(t, `SELECT rowid, `+taskColumns+` FROM tasks WHERE status = 'running' ORDER BY created_at, id`, 17, func(r []driver.Value) error {
		task, err := taskFromRow(r[1:])
		if err != nil {
			return err
		}
		rowid, _ := r[0].(int64)
		running = append(running, reconcileRunning{
			rowid: rowid, id: task.ID, required: task.DeliveryRequired,
			created: task.CreatedAt, updated: task.UpdatedAt, started: task.StartedAt, deadline: task.DeadlineAt,
			deliveryUpdated: task.DeliveryUpdatedAt,
		})
		return nil
	})
	if err != nil {
		return 0, nil, nil, err
	}
	err = rawQuery(t, `SELECT rowid, `+taskColumns+` FROM tasks
		WHERE delivery_status = 'pending' AND status IN ('succeeded','failed','timed_out','cancelled') ORDER BY ended_at, id`, 17, func(r []driver.Value) error {
		task, err := taskFromRow(r[1:])
		if err != nil {
			return err
		}
		rowid, _ := r[0].(int64)
		pending = append(pending, reconcilePending{
			rowid: rowid, id: task.ID, required: task.DeliveryRequired, created: task.CreatedAt, ended: task.EndedAt,
			deliveryUpdated: task.DeliveryUpdatedAt,
		})
		return nil
	})
	if err != nil {
		return 0, nil, nil, err
	}
	return queued, running, pending, nil
}

// applyReconcile writes the planned changes. Rows are updated by rowid
// per target state with one statement each, the id lists travelling as
// JSON arrays (json_each) rather than one statement per row, which is
// what keeps a 20,000-task reconcile fast. Each statement must change
// exactly the rows it names. The state guards are written +status and
// +delivery_status so that SQLite looks the rows up by rowid instead of
// scanning every running or pending entry of an index per statement.
// OR FAIL: a failing constraint stops the statement without undoing its
// earlier rows, and the error then rolls the whole transaction back, so
// the outcome is ABORT's; but SQLite then needs no statement journal, a
// copy of every page the statement touches written to a temporary file. The events are then appended in plan order
// (timeouts first, then closed deliveries) by joining the same rowids
// back to the rows just written, so no value is decoded from JSON.
func applyReconcile(t *txn, changes []reconcileChange, now float64) error {
	if len(changes) == 0 {
		return nil
	}
	groups := map[[2]string][]int64{} // (target state, code) -> rowids
	var timedOut, closed []int64      // plan order
	for _, c := range changes {
		if c.delivery {
			key := [2]string{c.to, c.code}
			groups[key] = append(groups[key], c.rowid)
			closed = append(closed, c.rowid)
		} else {
			key := [2]string{StatusTimedOut, c.code}
			groups[key] = append(groups[key], c.rowid)
			timedOut = append(timedOut, c.rowid)
		}
	}
	for _, key := range [][2]string{
		{StatusTimedOut, codeDeadlineExceeded}, {StatusTimedOut, codeRestartStale},
		{DeliveryFailed, codeGraceExpired}, {DeliveryNotApplicable, codeInternalTask},
	} {
		rowids := groups[key]
		if len(rowids) == 0 {
			continue
		}
		var res sql.Result
		var err error
		if key[0] == StatusTimedOut {
			res, err = t.ExecContext(t.ctx, `UPDATE OR FAIL tasks SET status = 'timed_out', updated_at = ?, ended_at = ?, terminal_code = ?, version = version + 1
				WHERE +status = 'running' AND rowid IN (SELECT value FROM json_each(?))`, now, now, key[1], rowidList(rowids))
		} else {
			res, err = t.ExecContext(t.ctx, `UPDATE OR FAIL tasks SET delivery_status = ?, delivery_updated_at = ?, delivery_code = ?, version = version + 1
				WHERE +delivery_status = 'pending' AND rowid IN (SELECT value FROM json_each(?))`, key[0], now, key[1], rowidList(rowids))
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(rowids)) {
			return internal("reconcile apply", errOrMismatch(err))
		}
	}
	if len(timedOut) > 0 {
		if _, err := t.ExecContext(t.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT tasks.id, ?, ?, tasks.status, ?, tasks.terminal_code FROM json_each(?) AS j JOIN tasks ON tasks.rowid = j.value ORDER BY j.key`,
			eventTaskTransition, StatusRunning, now, rowidList(timedOut)); err != nil {
			return err
		}
	}
	if len(closed) > 0 {
		if _, err := t.ExecContext(t.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT tasks.id, ?, ?, tasks.delivery_status, ?, tasks.delivery_code FROM json_each(?) AS j JOIN tasks ON tasks.rowid = j.value ORDER BY j.key`,
			eventDeliveryTransition, DeliveryPending, now, rowidList(closed)); err != nil {
			return err
		}
	}
	return nil
}

// rowidList renders rowids as a JSON array.
func rowidList(rowids []int64) string {
	b := make([]byte, 0, 2+len(rowids)*8)
	b = append(b, '[')
	for i, r := range rowids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, r, 10)
	}
	return string(append(b, ']'))
}
