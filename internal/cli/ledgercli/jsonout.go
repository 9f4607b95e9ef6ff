package ledgercli

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// okAnd is a report printed with "ok": true among its own keys (list's
// page).
type okAnd struct{ report json.Marshaler }

// object is a JSON object under construction; encode sorts its keys, as
// the reference's json.dumps(sort_keys=True) does.
type object map[string]any

// encodeLine writes v as one compact JSON line: keys sorted by code point,
// "," and ":" separators, floats as Python's repr, a trailing newline.
// Supported values: nil, bool, int, int64, float64, string, *float64,
// *string, object, []object, []ledger.Event (Event.MarshalJSON), the
// ledger's reports (their MarshalJSON), okAnd, and
// ledger.Task and []ledger.Task, which are written by Task.MarshalJSON (the one reading of a task's public shape:
// has_payload_hash, never the fingerprint).
func encodeLine(v any) []byte {
	var b strings.Builder
	encodeValue(&b, v)
	b.WriteByte('\n')
	return []byte(b.String())
}

func encodeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(pyFloat(x))
	case *float64:
		if x == nil {
			b.WriteString("null")
		} else {
			b.WriteString(pyFloat(*x))
		}
	case string:
		encodeString(b, x)
	case *string:
		if x == nil {
			b.WriteString("null")
		} else {
			encodeString(b, *x)
		}
	case object:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Go compares strings bytewise, which for UTF-8 equals Python's
		// code point order.
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, k)
			b.WriteByte(':')
			encodeValue(b, x[k])
		}
		b.WriteByte('}')
	case ledger.Task:
		js, err := x.MarshalJSON()
		if err != nil {
			// A non-finite time: the caller recovers it into InternalError.
			panic("cli: " + err.Error())
		}
		b.Write(js)
	case []ledger.Task:
		b.WriteByte('[')
		for i, t := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeValue(b, t)
		}
		b.WriteByte(']')
	case []ledger.Event:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			js, err := e.MarshalJSON()
			if err != nil {
				// A non-finite time: the caller recovers it into InternalError.
				panic("cli: " + err.Error())
			}
			b.Write(js)
		}
		b.WriteByte(']')
	case []object:
		b.WriteByte('[')
		for i, o := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeValue(b, o)
		}
		b.WriteByte(']')
	case okAnd:
		js, err := x.report.MarshalJSON()
		var fields map[string]json.RawMessage
		if err == nil {
			err = json.Unmarshal(js, &fields)
		}
		if err != nil {
			panic("cli: " + err.Error())
		}
		o := object{"ok": true}
		for k, v := range fields {
			o[k] = v
		}
		encodeValue(b, o)
	case json.RawMessage:
		b.Write(x)
	case ledger.BackupReport:
		// Its fields carry the printed names, in sorted order.
		js, err := json.Marshal(x)
		if err != nil {
			panic("cli: " + err.Error())
		}
		b.Write(js)
	case json.Marshaler:
		// The ledger's reports, whose encoding is the one this command
		// prints.
		js, err := x.MarshalJSON()
		if err != nil {
			panic("cli: " + err.Error())
		}
		b.Write(js)
	default:
		// A programming error, never user input: the caller recovers it
		// into InternalError.
		panic(fmt.Sprintf("cli: cannot encode %T", v))
	}
}

// encodeString writes s as json.dumps does with its default ensure_ascii.
func encodeString(b *strings.Builder, s string) {
	b.Write(pyjson.AppendASCIIString(nil, s))
}

// pyFloat formats a finite float as Python's repr does: the shortest digits
// that round-trip, positional notation when the decimal exponent is in
// [-4, 16), scientific notation ("1e+16", "1e-05") otherwise, and ".0" on
// integral positional values ("900.0").
func pyFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// json.dumps would write NaN/Infinity; the ledger never stores them.
		panic("cli: non-finite float")
	}
	return pyjson.FormatFloat(f)
}
