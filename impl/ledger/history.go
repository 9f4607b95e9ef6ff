package ledger

import (
	"context"
	"math"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// EventKind says which machine an event moved: the task's creation, the
// task's state, or its delivery.
type EventKind string

// Event kinds, as stored in task_events.event_kind.
const (
	EventCreated            EventKind = eventCreated
	EventTaskTransition     EventKind = eventTaskTransition
	EventDeliveryTransition EventKind = eventDeliveryTransition
)

// Event is one entry of a task's audit trail: what moved, from which state
// to which, with which code, and when. It holds no payload fingerprint
// (the events table has none) and no id: History is asked for one task.
type Event struct {
	Kind EventKind
	// From is nil for the creation; else the task or delivery state left.
	From *string
	To   string
	// Code is the code the move was recorded with: "created", "started",
	// the terminal or delivery code, or nil where none was given.
	Code *string
	// OccurredAt is the stored float Unix seconds to the nearest
	// nanosecond, as a Task's times are read.
	OccurredAt time.Time

	// occurredSeconds is the time as stored, which MarshalJSON writes
	// while OccurredAt still holds what was read; stored says there is
	// one.
	occurredSeconds float64
	stored          bool
}

// newEvent is an event as read, at the stored time at (finite).
func newEvent(kind EventKind, from *string, to string, code *string, at float64) Event {
	return Event{Kind: kind, From: from, To: to, Code: code, OccurredAt: instantOf(at), occurredSeconds: at, stored: true}
}

// MarshalJSON writes the event as the command line prints it: keys
// sorted, no spaces, the time as Python's float repr of the stored
// float (the float nearest to OccurredAt once that is changed).
func (e Event) MarshalJSON() ([]byte, error) {
	at := e.occurredSeconds
	if !e.stored || !instantOf(at).Equal(e.OccurredAt) {
		at = floatseconds.UnixSeconds(e.OccurredAt)
	}
	optString := func(b []byte, s *string) []byte {
		if s == nil {
			return append(b, "null"...)
		}
		return pyjson.AppendASCIIString(b, *s)
	}
	b := make([]byte, 0, 128)
	b = append(b, `{"code":`...)
	b = optString(b, e.Code)
	b = append(b, `,"from":`...)
	b = optString(b, e.From)
	b = append(b, `,"kind":`...)
	b = pyjson.AppendASCIIString(b, string(e.Kind))
	b = append(b, `,"occurred_at":`...)
	b = pyjson.AppendFloat(b, at)
	b = append(b, `,"to":`...)
	b = pyjson.AppendASCIIString(b, e.To)
	return append(b, '}'), nil
}

// historySQL selects one task's events in the order they were written,
// each with the position eventPositionSQL gives it in the chain its task's
// row implies (-1: a value no event of that task can hold). The events
// table has no index on task_id (schema v2 is fixed by its fingerprint),
// so this reads the whole table once.
var historySQL = `SELECT e.event_kind, e.from_value, e.to_value, e.code, e.occurred_at, ` + eventPositionSQL + `
	FROM task_events e, tasks o WHERE o.id = ?1 AND e.task_id = ?1 ORDER BY e.sequence`

// History returns a task's events, oldest first. An unknown id is
// ErrTaskNotFound, as for Get. Each event is checked against the task's
// row with the doctor's event rule (spec/task-state-guard.md §8.4): an event
// whose kind, states, code or time no event of that task can hold makes the
// read StateConflict and returns nothing of it. Whether the chain is
// complete (no event missing, none twice) is the doctor's to count.
func (l *Ledger) History(id string) ([]Event, error) {
	return l.HistoryContext(context.Background(), id)
}

// HistoryContext is History with a context whose cancellation or deadline
// ends the wait for the database (see Concurrency in the package
// documentation).
func (l *Ledger) HistoryContext(ctx context.Context, id string) ([]Event, error) {
	cid, err := ParseTaskID(id)
	if err != nil {
		return nil, err
	}
	if l.server != nil {
		return l.serverHistory(ctx, cid)
	}
	var out []Event
	err = l.lockedReadTx(ctx, "read", true, func(t *txn) error {
		out = out[:0] // a read-only read may be retried
		if _, err := getTask(t, cid); err != nil {
			return err
		}
		rows, err := t.QueryContext(t.ctx, historySQL, cid)
		if err != nil {
			return err
		}
		defer rows.Close()
		var v [6]any
		dest := []any{&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			e, ok := eventFromRow(v[:])
			if !ok {
				return errDamagedEvent
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []Event{}
	}
	return out, nil
}

// errDamagedEvent refuses a history that holds an event its task's row
// does not admit.
var errDamagedEvent = stateConflict("stored event is not consistent with its task")

// eventFromRow reads one row of historySQL. Its position test has already
// shown kind, to_value and a non-NULL from_value or code to be TEXT and the
// time a number; a finite time is required here as well, since an event is
// printed.
func eventFromRow(r []any) (Event, bool) {
	if pos, ok := r[5].(int64); !ok || pos < 0 {
		return Event{}, false
	}
	text := func(v any) (string, bool) {
		switch s := v.(type) {
		case string:
			return s, true
		case []byte:
			return string(s), true
		}
		return "", false
	}
	optText := func(v any) (*string, bool) {
		if v == nil {
			return nil, true
		}
		s, ok := text(v)
		return &s, ok
	}
	kind, ok1 := text(r[0])
	from, ok2 := optText(r[1])
	to, ok3 := text(r[2])
	code, ok4 := optText(r[3])
	var at float64
	switch n := r[4].(type) {
	case float64:
		at = n
	case int64:
		at = float64(n)
	default:
		return Event{}, false
	}
	if !(ok1 && ok2 && ok3 && ok4) || math.IsNaN(at) || math.IsInf(at, 0) {
		return Event{}, false
	}
	return newEvent(EventKind(kind), from, to, code, at), true
}
