package ledger

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"math"
	"sort"
)

// reconcileActive is an active task as reconciliation sees it.
type reconcileActive struct {
	id, status        string
	required          bool
	created, updated  float64
	started, deadline *float64
}

// reconcilePending is a terminal task whose delivery is still pending.
type reconcilePending struct {
	id              string
	required        bool
	created         float64
	ended           *float64
	deliveryUpdated float64
}

// reconcileChange is one write the plan would make.
type reconcileChange struct {
	id, code string
	delivery bool   // false: task times out; true: delivery closes
	to       string // delivery target when delivery is true
}

// planReconcile decides, as a pure function of the snapshot and now, what
// restart reconciliation does (contract §5). Changes are in write order.
func planReconcile(active []reconcileActive, pending []reconcilePending, now, activeGrace, deliveryGrace float64) (ReconcileReport, []reconcileChange, error) {
	var rep ReconcileReport
	var changes []reconcileChange
	staleBefore := now - activeGrace
	var timedOut []reconcilePending
	for _, a := range active {
		rep.ActiveExamined++
		code := ""
		if a.status == StatusRunning {
			switch {
			case a.deadline != nil && *a.deadline <= now:
				code = codeDeadlineExceeded
			case a.updated <= staleBefore:
				code = codeRestartStale
			}
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
		changes = append(changes, reconcileChange{id: a.id, code: code})
		ended := now
		timedOut = append(timedOut, reconcilePending{id: a.id, required: a.required, created: a.created, ended: &ended, deliveryUpdated: a.created})
	}
	// The tasks just timed out join the pending deliveries, in the same
	// (ended_at, id) order a second query after the first step would see.
	all := append(append([]reconcilePending(nil), pending...), timedOut...)
	sort.SliceStable(all, func(i, j int) bool {
		ei, ej := endedKey(all[i]), endedKey(all[j])
		if ei != ej {
			return ei < ej
		}
		return all[i].id < all[j].id
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
			changes = append(changes, reconcileChange{id: p.id, delivery: true, to: DeliveryFailed, code: codeGraceExpired})
		} else {
			rep.DeliveriesNotApplicable++
			changes = append(changes, reconcileChange{id: p.id, delivery: true, to: DeliveryNotApplicable, code: codeInternalTask})
		}
	}
	return rep, changes, nil
}

// endedKey orders a missing ended_at (only in a damaged file) first, as
// SQLite orders NULL first.
func endedKey(p reconcilePending) float64 {
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
		active, pending, err := reconcileSnapshot(t)
		if err != nil {
			return err
		}
		now, err := t.now()
		if err != nil {
			return err
		}
		var changes []reconcileChange
		rep, changes, err = planReconcile(active, pending, now, activeGrace, deliveryGrace)
		if err != nil || dryRun {
			return err
		}
		return applyReconcile(t, changes, now)
	}
	var err error
	if dryRun {
		err = l.lockedQuery(run)
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

// reconcileSnapshot reads the active and pending-delivery tasks. A value
// of the wrong type (only possible in a damaged file) is StateConflict.
func reconcileSnapshot(t *txn) ([]reconcileActive, []reconcilePending, error) {
	bad := false
	text := func(v any) string {
		s, ok := asText(v)
		bad = bad || !ok
		return s
	}
	num := func(v any) float64 {
		f, ok := asTime(v)
		bad = bad || !ok
		return f
	}
	opt := func(v any) *float64 {
		f, ok := optTime(v)
		bad = bad || !ok
		return f
	}
	var active []reconcileActive
	err := rawQuery(t, `SELECT id, status, delivery_required, created_at, updated_at, started_at, deadline_at FROM tasks
		WHERE status IN ('queued','running') ORDER BY created_at, id`, 7, func(r []driver.Value) error {
		required, _ := r[2].(int64)
		active = append(active, reconcileActive{
			id: text(r[0]), status: text(r[1]), required: required != 0,
			created: num(r[3]), updated: num(r[4]), started: opt(r[5]), deadline: opt(r[6]),
		})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var pending []reconcilePending
	err = rawQuery(t, `SELECT id, delivery_required, created_at, ended_at, delivery_updated_at FROM tasks
		WHERE delivery_status = 'pending' AND status IN ('succeeded','failed','timed_out','cancelled') ORDER BY ended_at, id`, 5, func(r []driver.Value) error {
		required, _ := r[1].(int64)
		pending = append(pending, reconcilePending{
			id: text(r[0]), required: required != 0, created: num(r[2]), ended: opt(r[3]), deliveryUpdated: num(r[4]),
		})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if bad {
		return nil, nil, stateConflict("a task row holds a value of the wrong type")
	}
	return active, pending, nil
}

// applyReconcile writes the planned changes. Rows are updated per target
// state with one statement each, and the events are appended by one
// statement in plan order, so the event sequence is the plan's order. The
// id lists travel as JSON arrays (json_each) rather than one statement per
// row, which is what keeps a 20,000-task reconcile fast.
func applyReconcile(t *txn, changes []reconcileChange, now float64) error {
	if len(changes) == 0 {
		return nil
	}
	groups := map[[2]string][]string{} // (target state, code) -> ids
	events := make([][5]string, 0, len(changes))
	for _, c := range changes {
		if c.delivery {
			key := [2]string{c.to, c.code}
			groups[key] = append(groups[key], c.id)
			events = append(events, [5]string{c.id, eventDeliveryTransition, DeliveryPending, c.to, c.code})
		} else {
			key := [2]string{StatusTimedOut, c.code}
			groups[key] = append(groups[key], c.id)
			events = append(events, [5]string{c.id, eventTaskTransition, StatusRunning, StatusTimedOut, c.code})
		}
	}
	for _, key := range [][2]string{
		{StatusTimedOut, codeDeadlineExceeded}, {StatusTimedOut, codeRestartStale},
		{DeliveryFailed, codeGraceExpired}, {DeliveryNotApplicable, codeInternalTask},
	} {
		ids := groups[key]
		if len(ids) == 0 {
			continue
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		if key[0] == StatusTimedOut {
			_, err = t.ExecContext(t.ctx, `UPDATE tasks SET status = 'timed_out', updated_at = ?, ended_at = ?, terminal_code = ?, version = version + 1
				WHERE status = 'running' AND id IN (SELECT value FROM json_each(?))`, now, now, key[1], string(list))
		} else {
			_, err = t.ExecContext(t.ctx, `UPDATE tasks SET delivery_status = ?, delivery_updated_at = ?, delivery_code = ?, version = version + 1
				WHERE delivery_status = 'pending' AND id IN (SELECT value FROM json_each(?))`, key[0], now, key[1], string(list))
		}
		if err != nil {
			return err
		}
	}
	list, err := json.Marshal(events)
	if err != nil {
		return err
	}
	_, err = t.ExecContext(t.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
		SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, ?, value ->> 4 FROM json_each(?) ORDER BY key`, now, string(list))
	return err
}

// lockedQuery runs fn in a read transaction with query_only set, so that
// nothing in fn can write (the dry run's guarantee).
func (l *Ledger) lockedQuery(fn func(*txn) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errClosed
	}
	if err := l.usableForReading(); err != nil {
		return err
	}
	ctx := context.Background()
	if !l.readOnly {
		if _, err := l.conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
			return classifySQLite("set query_only", err)
		}
		defer l.conn.ExecContext(ctx, "PRAGMA query_only = 0")
	}
	t, err := l.begin(ctx, "BEGIN")
	if err != nil {
		return err
	}
	return l.finish(ctx, fn(t), "dry run")
}
