// Package ledgerrows reads a ledger file's rows, exactly as stored, and the
// ledger's answers into the executable model's plain types, so tests and fuzz targets can compare
// the real ledger with model/ledger. It holds no rule of either: it only
// copies columns into fields.
package ledgerrows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/stateguard/stateguard/impl/ledger"
	model "github.com/stateguard/stateguard/model/ledger"
)

// Read returns every task (by id) and event (by sequence) that db holds.
func Read(db *sql.DB) ([]model.Task, []model.Event, error) {
	rows, err := db.Query(`SELECT id, parent_id, status, delivery_status, delivery_required, payload_hash, timeout_seconds,
		created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version
		FROM tasks ORDER BY id`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	tasks := []model.Task{}
	for rows.Next() {
		var t model.Task
		var parent, hash, code, dcode sql.NullString
		var timeout, started, ended, deadline sql.NullFloat64
		if err := rows.Scan(&t.ID, &parent, &t.Status, &t.DeliveryStatus, &t.DeliveryRequired, &hash, &timeout,
			&t.CreatedAt, &started, &t.UpdatedAt, &ended, &deadline, &t.DeliveryUpdatedAt, &code, &dcode, &t.Version); err != nil {
			return nil, nil, err
		}
		t.ParentID, t.PayloadHash, t.TerminalCode, t.DeliveryCode = nstr(parent), nstr(hash), nstr(code), nstr(dcode)
		t.TimeoutSeconds, t.StartedAt, t.EndedAt, t.DeadlineAt = nflt(timeout), nflt(started), nflt(ended), nflt(deadline)
		tasks = append(tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	erows, err := db.Query(`SELECT sequence, task_id, event_kind, from_value, to_value, occurred_at, code FROM task_events ORDER BY sequence`)
	if err != nil {
		return nil, nil, err
	}
	defer erows.Close()
	events := []model.Event{}
	for erows.Next() {
		var e model.Event
		var from, code sql.NullString
		if err := erows.Scan(&e.Sequence, &e.TaskID, &e.Kind, &from, &e.To, &e.OccurredAt, &code); err != nil {
			return nil, nil, err
		}
		e.From, e.Code = nstr(from), nstr(code)
		events = append(events, e)
	}
	return tasks, events, erows.Err()
}

func nstr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func nflt(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

// FromLedger copies a row the ledger returned into the model's row type,
// with its times and timeout as stored: read from the task's JSON, which
// writes the stored floats even where a Time or Duration cannot hold them.
func FromLedger(t ledger.Task) model.Task {
	f := storedFloats(t)
	return model.Task{
		ID: t.ID, ParentID: t.ParentID, Status: string(t.Status), DeliveryStatus: string(t.DeliveryStatus),
		DeliveryRequired: t.DeliveryRequired, PayloadHash: t.PayloadHash, TimeoutSeconds: f.Timeout,
		CreatedAt: f.CreatedAt, StartedAt: f.StartedAt, UpdatedAt: f.UpdatedAt, EndedAt: f.EndedAt,
		DeadlineAt: f.DeadlineAt, DeliveryUpdatedAt: f.DeliveryUpdatedAt, TerminalCode: nullableCode(t.TerminalCode),
		DeliveryCode: nullableCode(t.DeliveryCode), Version: t.Version,
	}
}

// taskFloats are a task's float columns as its JSON writes them.
type taskFloats struct {
	Timeout           *float64 `json:"timeout_seconds"`
	CreatedAt         float64  `json:"created_at"`
	StartedAt         *float64 `json:"started_at"`
	UpdatedAt         float64  `json:"updated_at"`
	EndedAt           *float64 `json:"ended_at"`
	DeadlineAt        *float64 `json:"deadline_at"`
	DeliveryUpdatedAt float64  `json:"delivery_updated_at"`
}

func storedFloats(t ledger.Task) taskFloats {
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	var f taskFloats
	if err := json.Unmarshal(b, &f); err != nil {
		panic(err)
	}
	return f
}

// TimeoutSeconds is a task's timeout as stored, in float seconds (nil for
// none).
func TimeoutSeconds(t ledger.Task) *float64 {
	return storedFloats(t).Timeout
}

// OccurredAt is an event's time as stored, in Unix seconds, read from its
// JSON as FromLedger reads a task's.
func OccurredAt(e ledger.Event) float64 {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	var v struct {
		At float64 `json:"occurred_at"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		panic(err)
	}
	return v.At
}

// WithClockSeconds is o reading the time from clock in Unix seconds, as
// the command line's test clock hands it over.
func WithClockSeconds(o ledger.Options, clock func() float64) ledger.Options {
	o.SetClockSeconds(clock)
	return o
}

// PruneSeconds is prune's options with a cutoff in Unix seconds, as the
// command line hands it over.
func PruneSeconds(endedBefore float64, dryRun bool) ledger.PruneOptions {
	o := ledger.PruneOptions{DryRun: dryRun}
	o.SetEndedBeforeSeconds(endedBefore)
	return o
}

// WithTimeoutSeconds is p with a timeout of float seconds, as the command
// line hands it over.
func WithTimeoutSeconds(p ledger.CreateParams, seconds float64) ledger.CreateParams {
	p.SetTimeoutSeconds(seconds)
	return p
}

// WithOptionalTimeoutSeconds is p with a timeout of *seconds, or none
// when seconds is nil.
func WithOptionalTimeoutSeconds(p ledger.CreateParams, seconds *float64) ledger.CreateParams {
	if seconds != nil {
		p.SetTimeoutSeconds(*seconds)
	}
	return p
}

// ReconcileSeconds reconciles with float graces, zero meaning zero, as the
// command line hands them over.
func ReconcileSeconds(ctx context.Context, l *ledger.Ledger, active, delivery float64, dryRun bool) (ledger.ReconcileReport, error) {
	opts := ledger.ReconcileOptions{DryRun: dryRun}
	opts.SetGraceSeconds(active, delivery)
	return l.ReconcileContext(ctx, opts)
}

// MetricsSeconds is Metrics with float graces, as the command line hands
// them over.
func MetricsSeconds(ctx context.Context, l *ledger.Ledger, active, delivery float64) (ledger.MetricsReport, error) {
	var opts ledger.MetricsOptions
	opts.SetGraceSeconds(active, delivery)
	return l.MetricsContext(ctx, opts)
}

// nullableCode is a code as the model holds it: nil for none.
func nullableCode(c ledger.Code) *string {
	if c == ledger.NoCode {
		return nil
	}
	s := string(c)
	return &s
}

// Class names an error's contract class; the ledger and the model use the
// same three words, so answers from both compare as text.
func Class(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ledger.ErrInvalidInput), errors.Is(err, model.ErrInvalidInput):
		return "InvalidInput"
	case errors.Is(err, ledger.ErrTaskNotFound), errors.Is(err, model.ErrTaskNotFound):
		return "TaskNotFound"
	case errors.Is(err, ledger.ErrStateConflict), errors.Is(err, model.ErrStateConflict):
		return "StateConflict"
	}
	return "other(" + err.Error() + ")"
}
