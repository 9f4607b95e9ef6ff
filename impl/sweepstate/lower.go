package sweepstate

import (
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"time"

	"github.com/stateguard/stateguard/internal/codec/isotime"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/model/value"
)

// The rules a typed command breaks before it becomes the command line's
// form (the others are checked on that form, by check).
var (
	errNotJSON     = errors.New("not encodable as JSON")
	errNotAnObject = errors.New("not a JSON object")
	errNoTimestamp = errors.New("no time given")
)

// lower turns a typed command into the command line's form: times as the
// clock's text, a TTL as an integer, Go values as JSON text. A command
// that breaks a rule this form cannot express answers ERROR.
func lower(cmd Command) (sweepcore.Command, *Result) {
	switch c := cmd.(type) {
	case Read:
		return sweepcore.Read{}, nil
	case Validate:
		return sweepcore.Validate{}, nil
	case CursorGet:
		return sweepcore.CursorGet{Source: c.Source}, nil
	case LeaseRelease:
		return sweepcore.LeaseRelease{Writer: c.Writer}, nil
	case Metrics:
		now, failed := stamp("Metrics.Now", c.Now)
		return sweepcore.Metrics{Now: now}, failed
	case CursorAdvance:
		now, failed := stamp("CursorAdvance.Now", c.Now)
		return sweepcore.CursorAdvance{Source: c.Source, To: c.To, PastItem: c.PastItem, Writer: c.Writer, Now: now}, failed
	case LeaseAcquire:
		if c.TTLMinutes < 0 {
			return nil, refused("LeaseAcquire.TTLMinutes", sweeprules.ErrNegativeTTL)
		}
		now, failed := stamp("LeaseAcquire.Now", c.Now)
		out := sweepcore.LeaseAcquire{Writer: c.Writer, Now: now}
		if c.TTLMinutes > 0 {
			out.TTLMinutes = big.NewInt(int64(c.TTLMinutes))
		}
		return out, failed
	case UpsertItem:
		text, err := jsonText(c.Fields, true)
		if err != nil {
			return nil, refused("UpsertItem.Fields", err)
		}
		now, failed := stamp("UpsertItem.Now", c.Now)
		return sweepcore.UpsertItem{Source: c.Source, ID: c.ID, JSON: text, Writer: c.Writer, Now: now}, failed
	case RunRecord:
		if c.Timestamp.IsZero() {
			return nil, refused("RunRecord.Timestamp", errNoTimestamp)
		}
		at, failed := stamp("RunRecord.Timestamp", c.Timestamp)
		counts := "{}"
		if c.Counts != nil {
			var err error
			if counts, err = jsonText(c.Counts, false); err != nil {
				return nil, refused("RunRecord.Counts", err)
			}
		}
		return sweepcore.RunRecord{Writer: c.Writer, Outcome: string(c.Outcome), Counts: counts, Timestamp: at}, failed
	case ImportLegacy:
		out := sweepcore.ImportLegacy{File: c.File}
		if c.SourceMap != nil {
			text, failed := sourceMapText(c.SourceMap)
			if failed != nil {
				return nil, failed
			}
			out.SourceMap = &text
		}
		return out, nil
	}
	return nil, refused("Command", sweepcore.ErrNotACommand)
}

// refused is lower's answer to a command that breaks a rule.
func refused(field string, rule error) *Result {
	r := invalid(field, rule)
	return &r
}

// stamp is the text a time is stamped as: the clock's form, or "" (the
// engine's clock) for the zero time. A time whose text the staleness
// check cannot read (a year outside 1 to 9999) breaks a rule: a lease
// stamped with it would never be stale.
func stamp(field string, t time.Time) (string, *Result) {
	if t.IsZero() {
		return "", nil
	}
	text := isotime.Format(t)
	if err := sweeprules.CheckNow(text); err != nil {
		return "", refused(field, err)
	}
	return text, nil
}

// jsonText is v as JSON text the command line's decoder reads, and must
// read as an object when object is set.
func jsonText(v any, object bool) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", errNotJSON
	}
	text := string(b)
	if err := sweeprules.CheckText(text); err != nil {
		return "", err
	}
	// encoding/json writes no NaN or Infinity, so only text Python's
	// rules read differently could fail here.
	parsed, err := pyjson.Decode(text)
	if err != nil {
		return "", errNotJSON
	}
	if _, isMap := parsed.(*value.Map); object && !isMap {
		return "", errNotAnObject
	}
	return text, nil
}

// sourceMapText is the --source-map text of m, its keys sorted so that the
// text does not depend on the map's iteration order.
func sourceMapText(m map[string]string) (string, *Result) {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if sweeprules.CheckText(k) != nil || sweeprules.CheckText(v) != nil {
			return "", refused("ImportLegacy.SourceMap", sweeprules.ErrNotUTF8)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	doc := value.NewMap()
	for _, k := range keys {
		doc.Set(k, m[k])
	}
	return string(pyjson.Encode(doc)), nil
}
