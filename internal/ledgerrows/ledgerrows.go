// Package ledgerrows reads a ledger file's rows, exactly as stored, into
// the executable model's plain types, so tests and fuzz targets can compare
// the real ledger with model/ledger. It holds no rule of either: it only
// copies columns into fields.
package ledgerrows

import (
	"database/sql"

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
