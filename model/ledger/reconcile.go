package ledger

import (
	"slices"
	"strings"
)

// ReconcileReport holds counts only, never ids.
type ReconcileReport struct {
	ActiveExamined          int
	TasksTimedOut           int
	FreshActiveRetained     int
	PendingDeliveryExamined int
	DeliveriesFailed        int
	DeliveriesNotApplicable int
	PendingDeliveryRetained int
	DryRun                  bool
	Applied                 bool
}

// DefaultGrace is the default active and delivery grace in seconds.
const DefaultGrace = 600.0

// decision is one write reconciliation would make.
type decision struct {
	id       string
	delivery bool   // false: task timeout; true: delivery close
	status   string // target state
	code     string
}

// Reconcile decides restart reconciliation at now and, unless dryRun, applies
// it. A dry run decides exactly the same (the delivery step sees the tasks the
// first step would time out) and leaves the model untouched.
//
// Graces must be finite and non-negative (InvalidInput). When a task that
// would time out has a timestamp later than now (the clock moved backwards
// past its start or last heartbeat), the whole reconcile is a StateConflict,
// in a dry run too, so that a preview never promises what apply refuses.
func (m *Model) Reconcile(now, activeGrace, deliveryGrace float64, dryRun bool) (ReconcileReport, error) {
	if !finite(activeGrace) || activeGrace < 0 || !finite(deliveryGrace) || deliveryGrace < 0 {
		return ReconcileReport{}, invalid("grace")
	}
	if !finite(now) {
		return ReconcileReport{}, invalid("clock")
	}
	rep, decisions, err := m.decide(now, activeGrace, deliveryGrace)
	if err != nil {
		return ReconcileReport{}, err
	}
	rep.DryRun = dryRun
	rep.Applied = !dryRun
	if dryRun {
		return rep, nil
	}
	for _, d := range decisions {
		t, _ := m.lookup(d.id)
		code := d.code
		if d.delivery {
			m.closeDelivery(t, d.status, &code, now)
		} else {
			m.closeTask(t, d.status, &code, now)
		}
	}
	return rep, nil
}

// decide computes the report and the ordered writes without changing m.
func (m *Model) decide(now, activeGrace, deliveryGrace float64) (ReconcileReport, []decision, error) {
	var rep ReconcileReport
	var out []decision

	var active []Task
	for _, t := range m.tasks {
		if !TaskMachine.IsTerminal(t.Status) {
			active = append(active, t)
		}
	}
	slices.SortFunc(active, byCreatedThenID)
	timedOut := map[string]bool{}
	staleBefore := now - activeGrace
	for _, t := range active {
		rep.ActiveExamined++
		code := ""
		switch {
		case t.Status != StatusRunning:
		case t.DeadlineAt != nil && *t.DeadlineAt <= now:
			code = CodeDeadlineExceeded
		case t.UpdatedAt <= staleBefore:
			code = CodeRestartStale
		}
		if code == "" {
			rep.FreshActiveRetained++
			continue
		}
		if now < t.UpdatedAt || (t.StartedAt != nil && now < *t.StartedAt) {
			return ReconcileReport{}, nil, ErrClockBackwards
		}
		rep.TasksTimedOut++
		timedOut[t.ID] = true
		out = append(out, decision{id: t.ID, status: StatusTimedOut, code: code})
	}

	// Pending deliveries of terminal tasks, as they would be after step 1.
	type pending struct {
		id       string
		ended    float64
		required bool
	}
	var pend []pending
	for _, t := range m.tasks {
		if t.DeliveryStatus != DeliveryPending {
			continue
		}
		switch {
		case timedOut[t.ID]:
			pend = append(pend, pending{t.ID, now, t.DeliveryRequired})
		case TaskMachine.IsTerminal(t.Status):
			pend = append(pend, pending{t.ID, *t.EndedAt, t.DeliveryRequired})
		}
	}
	slices.SortFunc(pend, func(a, b pending) int {
		if a.ended != b.ended {
			if a.ended < b.ended {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	expiredBefore := now - deliveryGrace
	for _, p := range pend {
		rep.PendingDeliveryExamined++
		if p.ended > expiredBefore {
			rep.PendingDeliveryRetained++
			continue
		}
		if p.required {
			rep.DeliveriesFailed++
			out = append(out, decision{id: p.id, delivery: true, status: DeliveryFailed, code: CodeDeliveryGraceExpired})
		} else {
			rep.DeliveriesNotApplicable++
			out = append(out, decision{id: p.id, delivery: true, status: DeliveryNotApplicable, code: CodeInternalTask})
		}
	}
	return rep, out, nil
}
