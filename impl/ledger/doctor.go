package ledger

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"math"
)

// Doctor checks the ledger read-only and reports counts only (spec/task-state-guard.md
// §8). When the schema is not exactly v2 it returns the early report: all
// counts zero, SchemaOK false, DoctorErrorCount 1.
func (l *Ledger) Doctor() (DoctorReport, error) {
	return l.DoctorContext(context.Background())
}

// DoctorContext is Doctor with a context whose cancellation or deadline ends
// the wait for the database (see Concurrency in the package
// documentation).
func (l *Ledger) DoctorContext(ctx context.Context) (DoctorReport, error) {
	if l.server != nil {
		return l.serverDoctor(ctx)
	}
	var rep DoctorReport
	// Doctor reports on any schema (the early report), so it skips the
	// schema gate the other reads have.
	err := l.lockedReadTx(ctx, "doctor", false, func(t *txn) error {
		rep = runDoctor(t)
		// The doctor counts a failed check instead of returning it; a
		// context that ended meanwhile made SQLite interrupt those
		// checks, so the report says nothing and the context's end is
		// the answer.
		return t.ctx.Err()
	})
	if err != nil {
		return DoctorReport{}, err
	}
	return rep, nil
}

// newDoctorReport is the all-zero report with every state key present.
func newDoctorReport() DoctorReport {
	r := DoctorReport{QuickCheckOK: true, TaskStatusCounts: map[Status]int{}, DeliveryStatusCounts: map[DeliveryStatus]int{}}
	for _, s := range taskStates {
		r.TaskStatusCounts[Status(s)] = 0
	}
	for _, s := range deliveryStates {
		r.DeliveryStatusCounts[DeliveryStatus(s)] = 0
	}
	return r
}

// doctorTask is one tasks row as stored, with types unchecked.
type doctorTask struct {
	id, parent, status, delivery, hash, tcode, dcode any
	required, timeout, version                       any
	created, started, updated, ended, deadline, dup  any
}

const quickCheckSQL = "PRAGMA quick_check"

// quickCheck reports whether PRAGMA quick_check passes; a check that
// cannot run fails too (the doctor counts it).
func quickCheck(t *txn, canonicalSchema bool) bool {
	ok, err := runQuickCheck(t, canonicalSchema)
	return ok && err == nil
}

// runQuickCheck runs PRAGMA quick_check and reports whether it passed, or
// the error that kept it from answering. Most of its cost is evaluating
// the CHECK constraints row by row; when the schema is exactly v2 (so the
// file's CHECK constraints are checkConstraintsSQL's) and the ledger is
// read-only (nothing can be written while checks are off), the structural
// check runs with CHECK constraints ignored and one aggregate query counts
// the rows that violate them instead, which gives the same answer in a
// fraction of the time.
func runQuickCheck(t *txn, canonicalSchema bool) (bool, error) {
	if !canonicalSchema || !t.l.readOnly {
		return quickCheckOK(t)
	}
	if _, err := t.l.conn.ExecContext(t.ctx, "PRAGMA ignore_check_constraints = 1"); err != nil {
		return quickCheckOK(t)
	}
	structural, serr := quickCheckOK(t)
	_, rerr := t.l.conn.ExecContext(t.ctx, "PRAGMA ignore_check_constraints = 0")
	if on, err := t.l.pragmaInt("PRAGMA ignore_check_constraints"); rerr != nil || err != nil || on != 0 {
		// Refuse to go on with checks off; the ledger is read-only anyway.
		return false, internal("restore CHECK constraints", errors.Join(rerr, errOrMismatch(err)))
	}
	if !structural || serr != nil {
		return false, serr
	}
	var violations int
	if err := t.l.conn.QueryRowContext(t.ctx, checkConstraintsSQL).Scan(&violations); err != nil {
		return false, err
	}
	return violations == 0, nil
}

// checkConstraintsSQL counts the rows of a v2 file that violate one of the
// schema's CHECK constraints, written exactly as schemaDDL states them. A
// CHECK fails only when its expression is false (NULL passes), as NOT of
// each expression expresses.
const checkConstraintsSQL = `SELECT
  (SELECT count(*) FROM tasks WHERE
      NOT (status IN ('queued','running','succeeded','failed','timed_out','cancelled'))
   OR NOT (delivery_status IN ('pending','delivered','failed','not_applicable'))
   OR NOT (delivery_required IN (0,1))
   OR NOT (payload_hash IS NULL OR (length(payload_hash) = 64 AND payload_hash NOT GLOB '*[^0-9a-f]*'))
   OR NOT (timeout_seconds IS NULL OR timeout_seconds >= 0)
   OR NOT (version >= 0)
   OR NOT (parent_id IS NULL OR parent_id <> id)
   OR NOT (deadline_at IS NULL OR started_at IS NOT NULL)
   OR NOT ((status IN ('queued','running') AND ended_at IS NULL)
        OR (status IN ('succeeded','failed','timed_out','cancelled') AND ended_at IS NOT NULL)))
+ (SELECT count(*) FROM task_events WHERE
      NOT (event_kind IN ('created','task_transition','delivery_transition')))`

// quickCheckOK runs PRAGMA quick_check; anything but a single "ok" fails.
func quickCheckOK(t *txn) (bool, error) {
	if err := faultIn(quickCheckSQL); err != nil {
		return false, err
	}
	rows, err := t.l.conn.QueryContext(t.ctx, quickCheckSQL)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() && len(lines) < 2 {
		var s string
		if err := rows.Scan(&s); err != nil {
			return false, err
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return len(lines) == 1 && lines[0] == "ok", nil
}

func countRows(t *txn, query string) (int, error) {
	if err := faultIn(query); err != nil {
		return 0, err
	}
	rows, err := t.l.conn.QueryContext(t.ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

// asText returns a TEXT value (the driver may hand out string or []byte).
func asText(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	}
	return "", false
}

// asTime returns a finite number; ok is false for NULL, text or non-finite.
func asTime(v any) (float64, bool) {
	switch f := v.(type) {
	case float64:
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	case int64:
		return float64(f), true
	}
	return 0, false
}

// optTime returns (nil, true) for NULL, the value for a finite number, and
// ok false for anything else.
func optTime(v any) (*float64, bool) {
	if v == nil {
		return nil, true
	}
	f, ok := asTime(v)
	if !ok {
		return nil, false
	}
	return &f, true
}

// optNumber returns (nil, true) for NULL, the value for any number,
// infinities included, and ok false for anything else.
func optNumber(v any) (*float64, bool) {
	switch f := v.(type) {
	case nil:
		return nil, true
	case float64:
		return &f, true
	case int64:
		x := float64(f)
		return &x, true
	}
	return nil, false
}

// countStates adds one task row to the report's status counts (a value
// outside the known ones is counted under none) and counts a combination
// of states the machines cannot reach as a state inconsistency.
func countStates(rep *DoctorReport, d *doctorTask) {
	if s, ok := d.status.(string); ok {
		if _, known := rep.TaskStatusCounts[Status(s)]; known {
			rep.TaskStatusCounts[Status(s)]++
		}
	}
	if s, ok := d.delivery.(string); ok {
		if _, known := rep.DeliveryStatusCounts[DeliveryStatus(s)]; known {
			rep.DeliveryStatusCounts[DeliveryStatus(s)]++
		}
	}
	if !taskStateOK(d) {
		rep.StateInconsistencyCount++
	}
}

func taskStateOK(d *doctorTask) bool {
	id, ok := asText(d.id)
	if !ok || !isCanonicalID(id) {
		return false
	}
	if d.parent != nil {
		p, ok := asText(d.parent)
		if !ok || !isCanonicalID(p) {
			return false
		}
	}
	status, ok1 := asText(d.status)
	delivery, ok2 := asText(d.delivery)
	if !ok1 || !ok2 || !isTaskState(status) || !isDeliveryState(delivery) {
		return false
	}
	req, ok := d.required.(int64)
	if !ok || (req != 0 && req != 1) {
		return false
	}
	if d.hash != nil {
		h, ok := asText(d.hash)
		if !ok || !ValidPayloadHash(h) {
			return false
		}
	}
	if d.timeout != nil {
		f, ok := asTime(d.timeout)
		if !ok || f < 0 {
			return false
		}
	}
	terminal := isTerminal(status)
	// ended_at is set exactly when the task is terminal. The schema's CHECK
	// says so too, but a file edited with CHECK constraints off holds such
	// rows, and the operations read rows through these rules (rowcheck.go).
	if terminal != (d.ended != nil) {
		return false
	}
	if d.tcode != nil {
		c, ok := asText(d.tcode)
		if !ok || !terminal || !taskCodeAllowed(status, c) {
			return false
		}
	}
	if d.dcode != nil {
		c, ok := asText(d.dcode)
		if !ok || delivery == string(DeliveryPending) || !deliveryCodeAllowed(delivery, c) {
			return false
		}
	}
	if delivery != string(DeliveryPending) && !terminal {
		return false
	}
	if req == 1 && delivery == string(DeliveryNotApplicable) {
		return false
	}
	if req == 0 && (delivery == string(DeliveryDelivered) || delivery == string(DeliveryFailed)) {
		return false
	}
	version, ok := d.version.(int64)
	if !ok {
		return false
	}
	implied := int64(0)
	if d.started != nil {
		implied++
	}
	if terminal {
		implied++
	}
	if delivery != string(DeliveryPending) {
		implied++
	}
	return version >= implied
}

func taskTimesOK(d *doctorTask) bool {
	created, ok1 := asTime(d.created)
	updated, ok2 := asTime(d.updated)
	dup, ok3 := asTime(d.dup)
	started, ok4 := optTime(d.started)
	ended, ok5 := optTime(d.ended)
	deadline, ok6 := optTime(d.deadline)
	// timeout_seconds is a duration, not a time: a non-finite one is a
	// value finding (taskStateOK), and here only the deadline's sum uses
	// it, as model/ledger's Checker does.
	timeout, ok7 := optNumber(d.timeout)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return false
	}
	if updated < created || dup < created {
		return false
	}
	if started != nil && (*started < created || updated < *started) {
		return false
	}
	if ended != nil && (*ended < created || (started != nil && *ended < *started)) {
		return false
	}
	status, _ := asText(d.status)
	delivery, _ := asText(d.delivery)
	if isTerminal(status) && (ended == nil || updated != *ended) {
		return false
	}
	if deadline != nil && (started == nil || timeout == nil || *deadline != *started+*timeout) {
		return false
	}
	if deadline == nil && started != nil && timeout != nil {
		return false
	}
	if status == string(StatusQueued) && (started != nil || deadline != nil) {
		return false
	}
	if status == string(StatusRunning) && started == nil {
		return false
	}
	if delivery == string(DeliveryPending) && dup != created {
		return false
	}
	// Only a known closed state has the closed-delivery times; an unknown
	// one is a value finding (taskStateOK), as in the Checker.
	if isDeliveryState(delivery) && delivery != string(DeliveryPending) && (ended == nil || dup < *ended) {
		return false
	}
	return true
}

// optText returns a nullable TEXT column as the chain compares it: ""
// for NULL, and ok false for a non-text or empty value (no valid stored
// value is empty, so "" can stand for NULL).
func optText(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok && s != ""
}

// rawQuery runs a query on the driver connection itself, inside the
// current transaction, and hands each row's driver values to each. It
// skips database/sql's per-column conversion, which dominates a scan of
// every row.
func rawQuery(t *txn, query string, ncols int, each func([]driver.Value) error) error {
	if err := faultIn(query); err != nil {
		return err
	}
	return t.l.conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return errors.New("driver cannot query directly")
		}
		rows, err := q.QueryContext(t.ctx, query, nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, ncols)
		for {
			err := rows.Next(dest)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := each(dest); err != nil {
				return err
			}
		}
	})
}

func faultIn(query string) error {
	if hooks.doctorQueryFault != nil {
		return hooks.doctorQueryFault(query)
	}
	return nil
}
