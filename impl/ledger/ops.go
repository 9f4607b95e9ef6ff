package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
)

// taskColumns is the column list every task query selects, in the order
// scanTask reads them.
const taskColumns = `id, parent_id, status, delivery_status, delivery_required, payload_hash,
	timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at,
	delivery_updated_at, terminal_code, delivery_code, version`

type rowScanner interface{ Scan(dest ...any) error }

// scanTask reads one row selected with taskColumns and checks it
// (taskFromRow): a damaged row is StateConflict.
func scanTask(r rowScanner) (taskRow, error) {
	var v [16]any
	dest := make([]any, len(v))
	for i := range v {
		dest[i] = &v[i]
	}
	if err := r.Scan(dest...); err != nil {
		return taskRow{}, err
	}
	var row [16]driver.Value
	for i := range v {
		row[i] = v[i]
	}
	return taskFromRow(row[:])
}

// textOrNull turns a nil pointer into a NULL argument.
func textOrNull(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// floatOrNull turns a nil pointer into a NULL argument.
func floatOrNull(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// queryTasks runs a statement that selects taskColumns and hands each
// checked row to each, in order, until each answers false or the rows end.
func queryTasks(t *txn, sqlText string, args []any, each func(taskRow) bool) error {
	rows, err := t.QueryContext(t.ctx, sqlText, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		task, err := scanTask(rows)
		if err != nil {
			return err
		}
		if !each(task) {
			break
		}
	}
	return rows.Err()
}

// getTask loads one task inside t, or ErrTaskNotFound.
func getTask(t *txn, id string) (taskRow, error) {
	task, err := scanTask(t.QueryRowContext(t.ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return taskRow{}, taskNotFound("task does not exist")
	}
	return task, err
}

// now reads the clock inside a write transaction and refuses a value that
// is not a finite time.
func (t *txn) now() (float64, error) {
	return checkedNow(t.l.clock(), nil)
}

// errDeadlineOverflow refuses a start whose deadline (now + timeout) is
// not a finite time: the task cannot be started at this clock.
var errDeadlineOverflow = stateConflict("deadline is not a finite time")

// notBefore refuses a clock earlier than any of the given timestamps.
func notBefore(now float64, times ...float64) error {
	for _, ts := range times {
		if now < ts {
			return errClockBackwards
		}
	}
	return nil
}

// addEvent appends one event row.
func addEvent(t *txn, taskID, kind string, from any, to string, at float64, code any) error {
	_, err := t.ExecContext(t.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES (?, ?, ?, ?, ?, ?)`,
		taskID, kind, from, to, at, code)
	return err
}

// storeDecision writes a decision's task row (a new one when created)
// and its event, if it records one.
func storeDecision(t *txn, d decision, created bool) error {
	n := d.task
	if created {
		if _, err := t.ExecContext(t.ctx, `INSERT INTO tasks (`+taskColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			taskArgs(n)...); err != nil {
			return err
		}
	} else if _, err := t.ExecContext(t.ctx, `UPDATE tasks SET status = ?, delivery_status = ?, started_at = ?, updated_at = ?, ended_at = ?,
		deadline_at = ?, delivery_updated_at = ?, terminal_code = ?, delivery_code = ?, version = ? WHERE id = ?`,
		string(n.Status), string(n.DeliveryStatus), floatOrNull(n.StartedAt), n.UpdatedAt, floatOrNull(n.EndedAt),
		floatOrNull(n.DeadlineAt), n.DeliveryUpdatedAt, textOrNull(n.TerminalCode), textOrNull(n.DeliveryCode), n.Version, n.ID); err != nil {
		return err
	}
	if d.event.kind == "" {
		return nil
	}
	return addEvent(t, n.ID, d.event.kind, textOrNull(d.event.from), d.event.to, d.at, textOrNull(d.event.code))
}

// taskArgs are a task's values in taskColumns' order, as a store writes
// them.
func taskArgs(n taskRow) []any {
	required := int64(0)
	if n.DeliveryRequired {
		required = 1
	}
	return []any{n.ID, textOrNull(n.ParentID), string(n.Status), string(n.DeliveryStatus), required, textOrNull(n.PayloadHash),
		floatOrNull(n.TimeoutSeconds), n.CreatedAt, floatOrNull(n.StartedAt), n.UpdatedAt, floatOrNull(n.EndedAt),
		floatOrNull(n.DeadlineAt), n.DeliveryUpdatedAt, textOrNull(n.TerminalCode), textOrNull(n.DeliveryCode), n.Version}
}

// lockedWrite takes the ledger lock and runs fn in a write transaction.
func (l *Ledger) lockedWrite(ctx context.Context, fn func(*txn) error) error {
	return l.underWriteLock(ctx, func() error { return l.write(ctx, fn) })
}

// underWriteLock runs body holding the ledger lock, on a writable ledger
// that is still open.
func (l *Ledger) underWriteLock(ctx context.Context, body func() error) error {
	if err := l.acquireOpen(ctx); err != nil {
		return err
	}
	defer l.release()
	if l.readOnly {
		return errReadOnly
	}
	return body()
}

// refuseMutation answers a mutation's early refusal on a read-only
// ledger: ErrClosed once it is closed (which answers every operation
// after Close), else ErrReadOnly. A writable ledger passes; its closed
// check runs under the lock with the write.
func (l *Ledger) refuseMutation(ctx context.Context) error {
	if !l.readOnly {
		return nil
	}
	if err := l.acquireOpen(ctx); err != nil {
		return err
	}
	defer l.release()
	return errReadOnly
}

// sameFloat compares two optional numbers.
func sameFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func sameString(a *string, b string) bool {
	if a == nil {
		return b == ""
	}
	return *a == b
}

// Create adds a queued task, or returns the stored one when the same id
// already exists with identical parameters (spec/task-state-guard.md §6.1).
func (l *Ledger) Create(p CreateParams) (Task, error) {
	return l.CreateContext(context.Background(), p)
}

// CreateContext is Create with a context whose cancellation or deadline ends
// the wait for another connection's write lock (see Concurrency in the
// package documentation).
func (l *Ledger) CreateContext(ctx context.Context, p CreateParams) (Task, error) {
	return publicTask(l.create(ctx, p))
}

// create is CreateContext's work, on the stored row.
func (l *Ledger) create(ctx context.Context, p CreateParams) (taskRow, error) {
	if err := l.refuseMutation(ctx); err != nil {
		return taskRow{}, err
	}
	var id, parent string
	var err error
	if p.TaskID != "" {
		if id, err = ParseTaskID(p.TaskID); err != nil {
			return taskRow{}, err
		}
	}
	if p.ParentID != "" {
		if parent, err = ParseTaskID(p.ParentID); err != nil {
			return taskRow{}, err
		}
	}
	if p.PayloadHash != "" && !ValidPayloadHash(p.PayloadHash) {
		return taskRow{}, invalidInput("payload hash must be 64 lowercase hex characters")
	}
	if p.timeoutSeconds == nil && p.Timeout != nil {
		if *p.Timeout < 0 {
			return taskRow{}, invalidInput("timeout must be a finite, non-negative number")
		}
		seconds := floatseconds.Seconds(*p.Timeout)
		p.timeoutSeconds = &seconds
	}
	if p.timeoutSeconds != nil && !validSeconds(*p.timeoutSeconds) {
		return taskRow{}, invalidInput("timeout must be a finite, non-negative number")
	}
	if l.server != nil {
		return l.serverCreate(ctx, id, parent, p)
	}
	var out taskRow
	err = l.lockedWrite(ctx, func(t *txn) error {
		var err error
		if id, err = l.idOrNew(id); err != nil {
			return err
		}
		existing, err := getTask(t, id)
		if err == nil {
			out = existing
			return decideRepeatCreate(existing, parent, p)
		}
		if !errors.Is(err, ErrTaskNotFound) {
			return err
		}
		var parentTask *taskRow
		if parent != "" {
			found, err := getTask(t, parent)
			if err != nil {
				return err
			}
			parentTask = &found
		}
		d, err := decideCreate(id, parentTask, p, t.now)
		if err != nil {
			return err
		}
		if err := storeDecision(t, d, true); err != nil {
			return err
		}
		out, err = getTask(t, id)
		return err
	})
	return out, err
}

// idOrNew is a create's id: id itself, or when it is empty a new one from
// the ledger's source, which must be canonical. A caller that may run
// its transaction again keeps the id it got, so a retry creates the same
// task.
func (l *Ledger) idOrNew(id string) (string, error) {
	if id != "" {
		return id, nil
	}
	fresh, err := l.newID()
	if err != nil {
		return "", err
	}
	if !isCanonicalID(fresh) {
		return "", internal("new id", errors.New("id source returned a non-canonical id"))
	}
	return fresh, nil
}

// writeTask is the shape the task operations share: refuse on a read-only
// ledger, parse the id, run check (argument rules that need no row), then,
// in one write transaction, load the task and let decide answer. decide
// returns changed=false to return the stored task unchanged (the idempotent
// repeats); otherwise the task is read back as written.
func (l *Ledger) writeTask(ctx context.Context, id string, check func() error, decide func(task taskRow, now nowFunc) (decision, error)) (taskRow, error) {
	if err := l.refuseMutation(ctx); err != nil {
		return taskRow{}, err
	}
	cid, err := ParseTaskID(id)
	if err != nil {
		return taskRow{}, err
	}
	if check != nil {
		if err := check(); err != nil {
			return taskRow{}, err
		}
	}
	if l.server != nil {
		return l.serverWriteTask(ctx, cid, decide)
	}
	var out taskRow
	err = l.lockedWrite(ctx, func(t *txn) error {
		task, err := getTask(t, cid)
		if err != nil {
			return err
		}
		d, err := decide(task, t.now)
		if err != nil || !d.changed {
			out = task
			return err
		}
		if err := storeDecision(t, d, false); err != nil {
			return err
		}
		out, err = getTask(t, cid)
		return err
	})
	if err != nil {
		return taskRow{}, err
	}
	return out, nil
}

// Start moves a queued task to running; a running task is returned
// unchanged.
func (l *Ledger) Start(id string) (Task, error) {
	return l.StartContext(context.Background(), id)
}

// StartContext is Start with a context whose cancellation or deadline ends
// the wait for another connection's write lock (see Concurrency in the
// package documentation).
func (l *Ledger) StartContext(ctx context.Context, id string) (Task, error) {
	return publicTask(l.writeTask(ctx, id, nil, decideStart))
}

// Heartbeat refreshes a running task's updated_at.
func (l *Ledger) Heartbeat(id string) (Task, error) {
	return l.HeartbeatContext(context.Background(), id)
}

// HeartbeatContext is Heartbeat with a context whose cancellation or deadline ends
// the wait for another connection's write lock (see Concurrency in the
// package documentation).
func (l *Ledger) HeartbeatContext(ctx context.Context, id string) (Task, error) {
	return publicTask(l.writeTask(ctx, id, nil, decideHeartbeat))
}

// CloseTask moves a task to a terminal state, recording code (NoCode for
// none; any other code must be registered for status, else
// ErrInvalidInput). Repeating the same terminal state returns the stored
// task unchanged (before the code is checked); a different terminal state
// is ErrAlreadyTerminal (an ErrStateConflict).
func (l *Ledger) CloseTask(id string, status Status, code Code) (Task, error) {
	return l.CloseTaskContext(context.Background(), id, status, code)
}

// CloseTaskContext is CloseTask with a context whose cancellation or
// deadline ends the wait for another connection's write lock (see
// Concurrency in the package documentation).
func (l *Ledger) CloseTaskContext(ctx context.Context, id string, status Status, code Code) (Task, error) {
	return l.CloseTaskOptionalCode(ctx, id, status, code.optional())
}

// CloseTaskOptionalCode is CloseTaskContext with the reason code as the
// reference's close takes it: nil for none, and a given code checked even
// when it is empty, so "" is a malformed code (ErrInvalidInput), not an
// absent one. Use it to pass on a code a caller typed, where Code's NoCode
// would turn an empty answer into no code at all.
func (l *Ledger) CloseTaskOptionalCode(ctx context.Context, id string, status Status, code *string) (Task, error) {
	check := func() error {
		if !isTerminal(status) {
			return invalidInput("close status must be terminal")
		}
		return nil
	}
	return publicTask(l.writeTask(ctx, id, check, func(task taskRow, now nowFunc) (decision, error) {
		return decideClose(task, status, code, now)
	}))
}

// SetDelivery closes a terminal task's delivery, recording code (NoCode
// for none; any other code must be registered for status, else
// ErrInvalidInput). The same value again is returned unchanged (before the
// code is checked); a delivery already settled otherwise is
// ErrDeliveryClosed, and a delivery state the task's kind does not allow is
// ErrStateConflict, also before the code.
func (l *Ledger) SetDelivery(id string, status DeliveryStatus, code Code) (Task, error) {
	return l.SetDeliveryContext(context.Background(), id, status, code)
}

// SetDeliveryContext is SetDelivery with a context whose cancellation or
// deadline ends the wait for another connection's write lock (see
// Concurrency in the package documentation).
func (l *Ledger) SetDeliveryContext(ctx context.Context, id string, status DeliveryStatus, code Code) (Task, error) {
	return l.SetDeliveryOptionalCode(ctx, id, status, code.optional())
}

// SetDeliveryOptionalCode is SetDeliveryContext with the reason code as
// the reference's delivery takes it: nil for none, and a given code checked
// even when it is empty (see CloseTaskOptionalCode).
func (l *Ledger) SetDeliveryOptionalCode(ctx context.Context, id string, status DeliveryStatus, code *string) (Task, error) {
	check := func() error {
		if status != DeliveryDelivered && status != DeliveryFailed && status != DeliveryNotApplicable {
			return invalidInput("delivery status must be terminal")
		}
		return nil
	}
	return publicTask(l.writeTask(ctx, id, check, func(task taskRow, now nowFunc) (decision, error) {
		return decideDelivery(task, status, code, now)
	}))
}

// usableForReading refuses a schema that reads cannot trust: anything but
// an exact v2, or an exact v1 whose content could migrate.
func (l *Ledger) usableForReading() error {
	if l.schema.okV2() || (l.schema.okV1() && !l.schema.v1Unsafe) {
		return nil
	}
	return stateConflict("schema does not match")
}

// Get returns one task.
func (l *Ledger) Get(id string) (Task, error) {
	return l.GetContext(context.Background(), id)
}

// GetContext is Get with a context whose cancellation or deadline ends
// the wait for the database (see Concurrency in the package
// documentation).
func (l *Ledger) GetContext(ctx context.Context, id string) (Task, error) {
	return publicTask(l.get(ctx, id))
}

// get is GetContext's work, on the stored row.
func (l *Ledger) get(ctx context.Context, id string) (taskRow, error) {
	cid, err := ParseTaskID(id)
	if err != nil {
		return taskRow{}, err
	}
	if l.server != nil {
		return l.serverGet(ctx, cid)
	}
	var out taskRow
	err = l.lockedReadTx(ctx, "read", true, func(t *txn) error {
		out, err = getTask(t, cid)
		return err
	})
	return out, err
}

// ChildrenOf returns the direct children of a task, ordered by created_at
// then id; a task without children gives an empty, non-nil slice (JSON
// []). An unknown id is ErrTaskNotFound.
func (l *Ledger) ChildrenOf(id string) ([]Task, error) {
	return l.ChildrenOfContext(context.Background(), id)
}

// ChildrenOfContext is ChildrenOf with a context whose cancellation or deadline ends
// the wait for the database (see Concurrency in the package
// documentation).
func (l *Ledger) ChildrenOfContext(ctx context.Context, id string) ([]Task, error) {
	rows, err := l.children(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]Task, len(rows))
	for i, r := range rows {
		out[i] = r.public()
	}
	return out, nil
}

// children is ChildrenOfContext's work, on the stored rows.
func (l *Ledger) children(ctx context.Context, id string) ([]taskRow, error) {
	cid, err := ParseTaskID(id)
	if err != nil {
		return nil, err
	}
	if l.server != nil {
		return l.serverChildren(ctx, cid)
	}
	var out []taskRow
	err = l.lockedReadTx(ctx, "read", true, func(t *txn) error {
		out = out[:0] // a read-only read may be retried
		if _, err := getTask(t, cid); err != nil {
			return err
		}
		return queryTasks(t, `SELECT `+taskColumns+` FROM tasks WHERE parent_id = ? ORDER BY created_at, id`, []any{cid}, func(task taskRow) bool {
			out = append(out, task)
			return true
		})
	})
	if out == nil && err == nil {
		out = []taskRow{}
	}
	return out, err
}
