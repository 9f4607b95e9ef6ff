package ledger

import (
	"errors"
	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
	"math"
	"strconv"
	"time"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// MarshalJSON writes the task exactly as task-state-guard prints it: keys
// sorted, no spaces, times and timeouts as Python's float repr, NULL
// columns as null, and has_payload_hash in place of the payload
// fingerprint, which the privacy contract keeps out of every output. The
// fingerprint itself is never written. A non-finite float (which the
// ledger never stores) is an error.
func (t Task) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 512)
	var err error
	float := func(f float64) {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			err = errors.New("ledger: task holds a non-finite time")
			return
		}
		b = pyjson.AppendFloat(b, f)
	}
	optFloat := func(f *float64) {
		if f == nil {
			b = append(b, "null"...)
			return
		}
		float(*f)
	}
	// A time writes the stored float while the field holds the Time read
	// from it, which may not hold the float exactly; else the float
	// nearest to it.
	var stored taskRow
	if t.stored != nil {
		stored = *t.stored
	}
	instant := func(v *time.Time, stored *float64) {
		switch {
		case v == nil:
			b = append(b, "null"...)
		case stored != nil && instantOf(*stored).Equal(*v):
			float(*stored)
		default:
			float(floatseconds.UnixSeconds(*v))
		}
	}
	optString := func(s *string) {
		if s == nil {
			b = append(b, "null"...)
			return
		}
		b = pyjson.AppendASCIIString(b, *s)
	}
	key := func(k string) {
		if len(b) > 0 {
			b = append(b, ',')
		} else {
			b = append(b, '{')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	// In sorted key order.
	key("created_at")
	instant(&t.CreatedAt, orNil(t.stored != nil, &stored.CreatedAt))
	key("deadline_at")
	instant(t.DeadlineAt, stored.DeadlineAt)
	key("delivery_code")
	optString(t.DeliveryCode.optional())
	key("delivery_required")
	b = strconv.AppendBool(b, t.DeliveryRequired)
	key("delivery_status")
	b = pyjson.AppendASCIIString(b, string(t.DeliveryStatus))
	key("delivery_updated_at")
	instant(&t.DeliveryUpdatedAt, orNil(t.stored != nil, &stored.DeliveryUpdatedAt))
	key("ended_at")
	instant(t.EndedAt, stored.EndedAt)
	key("has_payload_hash")
	b = strconv.AppendBool(b, t.PayloadHash != nil)
	key("id")
	b = pyjson.AppendASCIIString(b, t.ID)
	key("parent_id")
	optString(t.ParentID)
	key("started_at")
	instant(t.StartedAt, stored.StartedAt)
	key("status")
	b = pyjson.AppendASCIIString(b, string(t.Status))
	key("terminal_code")
	optString(t.TerminalCode.optional())
	key("timeout_seconds")
	switch {
	case t.Timeout == nil:
		optFloat(nil)
	case t.stored != nil && t.stored.TimeoutSeconds != nil && durationOf(*t.stored.TimeoutSeconds) == *t.Timeout:
		// The timeout read, which the Duration may not hold exactly.
		float(*t.stored.TimeoutSeconds)
	case *t.Timeout < 0:
		err = errors.New("ledger: task holds a negative timeout")
	default:
		float(floatseconds.Seconds(*t.Timeout))
	}
	key("updated_at")
	instant(&t.UpdatedAt, orNil(t.stored != nil, &stored.UpdatedAt))
	key("version")
	b = strconv.AppendInt(b, t.Version, 10)
	b = append(b, '}')
	if err != nil {
		return nil, err
	}
	return b, nil
}

// orNil is p when ok, else nil.
func orNil(ok bool, p *float64) *float64 {
	if !ok {
		return nil
	}
	return p
}
