package ledger

import (
	"errors"
	"math"
)

// The write operations' decisions, one pure function each: from the task
// as loaded (under the transaction's lock) and the operation's time to the
// task's new values and the event that records them. Both engines call
// them, so the rules of spec 6 have one reading whatever stores the rows.
// The time is asked for only when the task changes: an idempotent repeat
// or a refusal that needs no time reads no clock, as the reference does.

// nowFunc reads the operation's time; a decision calls it at most once.
type nowFunc func() (float64, error)

// taskEvent is the event a decision records, at the task's new time.
type taskEvent struct {
	kind string
	from *string
	to   string
	code *string
}

// decision is a write's outcome for one task: unchanged (the stored task
// is the answer), or the task as it is to be stored with its event at.
type decision struct {
	changed bool
	task    taskRow
	event   taskEvent
	at      float64
}

func unchanged() decision { return decision{} }

func textPtr(s string) *string { return &s }

// decideStart moves a queued task to running (spec 6.2); a running task is
// an idempotent repeat.
func decideStart(task taskRow, now nowFunc) (decision, error) {
	if task.Status == StatusRunning {
		return unchanged(), nil
	}
	if task.Status != StatusQueued {
		return decision{}, stateConflict("task is not queued")
	}
	at, err := now()
	if err != nil {
		return decision{}, err
	}
	if err := notBefore(at, task.CreatedAt, task.UpdatedAt); err != nil {
		return decision{}, err
	}
	next := task
	if task.TimeoutSeconds != nil {
		d := at + *task.TimeoutSeconds
		// Near the top of the float range the sum overflows; an
		// infinite deadline would be unreadable forever after.
		if math.IsInf(d, 0) {
			return decision{}, errDeadlineOverflow
		}
		next.DeadlineAt = &d
	} else {
		next.DeadlineAt = nil
	}
	next.Status = StatusRunning
	next.StartedAt = &at
	next.UpdatedAt = at
	next.Version++
	return decision{changed: true, task: next, at: at,
		event: taskEvent{eventTaskTransition, textPtr(string(StatusQueued)), string(StatusRunning), textPtr(codeStarted)}}, nil
}

// decideHeartbeat refreshes a running task's updated_at (spec 6.3); it
// records no event.
func decideHeartbeat(task taskRow, now nowFunc) (decision, error) {
	if task.Status != StatusRunning {
		return decision{}, stateConflict("task is not running")
	}
	at, err := now()
	if err != nil {
		return decision{}, err
	}
	if err := notBefore(at, task.UpdatedAt); err != nil {
		return decision{}, err
	}
	next := task
	next.UpdatedAt = at
	next.Version++
	return decision{changed: true, task: next, at: at}, nil
}

// decideClose moves a task to the terminal status with code (spec 6.4);
// the same terminal status again is an idempotent repeat, checked before
// the code.
func decideClose(task taskRow, status Status, code *string, now nowFunc) (decision, error) {
	if task.Status == status {
		return unchanged(), nil
	}
	if isTerminal(task.Status) {
		return decision{}, ErrAlreadyTerminal
	}
	if err := checkCode(code, taskCodeAllowed, string(status)); err != nil {
		return decision{}, err
	}
	at, err := now()
	if err != nil {
		return decision{}, err
	}
	times := []float64{task.CreatedAt, task.UpdatedAt}
	if task.StartedAt != nil {
		times = append(times, *task.StartedAt)
	}
	if err := notBefore(at, times...); err != nil {
		return decision{}, err
	}
	next := task
	next.Status = status
	next.UpdatedAt = at
	next.EndedAt = &at
	next.TerminalCode = code
	next.Version++
	return decision{changed: true, task: next, at: at,
		event: taskEvent{eventTaskTransition, textPtr(string(task.Status)), string(status), code}}, nil
}

// decideDelivery settles a terminal task's delivery with code (spec 6.5);
// the same value again is an idempotent repeat, checked before the code.
func decideDelivery(task taskRow, status DeliveryStatus, code *string, now nowFunc) (decision, error) {
	if task.DeliveryStatus == status {
		return unchanged(), nil
	}
	if task.DeliveryStatus != DeliveryPending {
		return decision{}, ErrDeliveryClosed
	}
	if task.DeliveryRequired == (status == DeliveryNotApplicable) {
		return decision{}, stateConflict("delivery state not allowed for this kind of task")
	}
	if !isTerminal(task.Status) {
		return decision{}, stateConflict("task is not terminal")
	}
	if err := checkCode(code, deliveryCodeAllowed, string(status)); err != nil {
		return decision{}, err
	}
	at, err := now()
	if err != nil {
		return decision{}, err
	}
	times := []float64{task.CreatedAt, task.DeliveryUpdatedAt}
	if task.EndedAt != nil {
		times = append(times, *task.EndedAt)
	}
	if err := notBefore(at, times...); err != nil {
		return decision{}, err
	}
	next := task
	next.DeliveryStatus = status
	next.DeliveryUpdatedAt = at
	next.DeliveryCode = code
	next.Version++
	return decision{changed: true, task: next, at: at,
		event: taskEvent{eventDeliveryTransition, textPtr(string(DeliveryPending)), string(status), code}}, nil
}

// decideRepeatCreate answers a create whose id is already stored: the
// stored task when the parameters are the same (spec 6.1), else a
// conflict.
func decideRepeatCreate(existing taskRow, parent string, p CreateParams) error {
	if sameString(existing.ParentID, parent) && sameString(existing.PayloadHash, p.PayloadHash) &&
		sameFloat(existing.TimeoutSeconds, p.timeoutSeconds) && existing.DeliveryRequired == !p.Internal {
		return nil
	}
	return stateConflict("task exists with different parameters")
}

// decideCreate makes a new queued task id under parent (nil for none).
func decideCreate(id string, parent *taskRow, p CreateParams, now nowFunc) (decision, error) {
	at, err := now()
	if err != nil {
		return decision{}, err
	}
	task := taskRow{
		ID:                id,
		Status:            StatusQueued,
		DeliveryStatus:    DeliveryPending,
		DeliveryRequired:  !p.Internal,
		CreatedAt:         at,
		UpdatedAt:         at,
		DeliveryUpdatedAt: at,
	}
	if parent != nil {
		if err := notBefore(at, parent.CreatedAt); err != nil {
			return decision{}, err
		}
		task.ParentID = textPtr(parent.ID)
	}
	if p.PayloadHash != "" {
		task.PayloadHash = textPtr(p.PayloadHash)
	}
	if p.timeoutSeconds != nil {
		// A negative zero is stored as zero: SQLite's REAL does so, and
		// a store that kept the sign would show it in the task's JSON.
		v := *p.timeoutSeconds + 0
		task.TimeoutSeconds = &v
	}
	return decision{changed: true, task: task, at: at,
		event: taskEvent{eventCreated, nil, string(StatusQueued), textPtr(codeCreated)}}, nil
}

// checkedNow is a transaction's clock reading refused when it is not a
// finite time.
func checkedNow(now float64, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	if math.IsNaN(now) || math.IsInf(now, 0) {
		return 0, internal("read clock", errors.New("clock returned a non-finite time"))
	}
	return now, nil
}

// decideReconcileTimeout is reconcile's step 1 for one running task it
// found stale at p.now (spec 7.2): timed out, with deadline_exceeded when
// its deadline has passed, else restart_stale. The SQLite engine applies
// the same rule as one statement (runningStaleSQL, timeoutCodeSQL).
func decideReconcileTimeout(task taskRow, p reconcileParams) decision {
	code := codeRestartStale
	if task.DeadlineAt != nil && *task.DeadlineAt <= p.now {
		code = codeDeadlineExceeded
	}
	at := p.now
	next := task
	next.Status = StatusTimedOut
	next.UpdatedAt = at
	next.EndedAt = &at
	next.TerminalCode = textPtr(code)
	next.Version++
	return decision{changed: true, task: next, at: at,
		event: taskEvent{eventTaskTransition, textPtr(string(StatusRunning)), string(StatusTimedOut), textPtr(code)}}
}

// decideReconcileClose is reconcile's step 2 for one terminal task whose
// pending delivery it closes at p.now (spec 7.3): failed with
// delivery_grace_expired when delivery is required, else not_applicable
// with internal_task.
func decideReconcileClose(task taskRow, p reconcileParams) decision {
	to, code := DeliveryNotApplicable, codeInternalTask
	if task.DeliveryRequired {
		to, code = DeliveryFailed, codeGraceExpired
	}
	at := p.now
	next := task
	next.DeliveryStatus = to
	next.DeliveryUpdatedAt = at
	next.DeliveryCode = textPtr(code)
	next.Version++
	return decision{changed: true, task: next, at: at,
		event: taskEvent{eventDeliveryTransition, textPtr(string(DeliveryPending)), string(to), textPtr(code)}}
}
