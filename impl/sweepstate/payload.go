package sweepstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/model/value"
)

// Payload is the JSON object an answer carries on the line after its word
// (for read, the whole document). It is the engine's own copy: changing
// what Decode gives changes nothing on disk.
//
// The payload's numbers are exact (integers of any size, floats as Python
// writes them) and its keys are in the document's order. Decode keeps
// both when asked: into an any, a number comes as a json.Number holding
// the payload's own text ("1180591620717411303424", "1.0", "1e+16"); into
// a json.RawMessage, a value comes as the command's bytes, keys in order.
// A map[string]any has no order of its own, and a float64 or an int64 holds
// only what fits it.
type Payload struct{ doc *value.Map }

// IsZero reports whether there is no payload (no line after the word).
func (p Payload) IsZero() bool { return p.doc == nil }

// MarshalJSON writes the payload exactly as the sweep-state command prints
// it after the word (Python's json.dumps with its defaults: ", " and ": "
// between elements, keys in the document's order, non-ASCII characters as
// \u escapes, integers of any size in full), without the newline; no
// payload is null. json.Marshal compacts what a Marshaler writes and
// escapes <, > and & in strings, so its bytes differ from the command's by
// those spaces and escapes only: the same values in the same order. Call
// MarshalJSON itself, or WriteTo, for the command's bytes.
func (p Payload) MarshalJSON() ([]byte, error) {
	if p.doc == nil {
		return []byte("null"), nil
	}
	return pyjson.Encode(p.doc), nil
}

// WriteTo writes the bytes MarshalJSON gives (nothing for no payload) to
// w, without holding them whole: read's payload of a large file is not
// copied into one buffer first.
func (p Payload) WriteTo(w io.Writer) (int64, error) {
	if p.doc == nil {
		return 0, nil
	}
	cw := &countingWriter{w: w}
	err := pyjson.EncodeTo(cw, p.doc)
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// UnmarshalJSON reads a JSON object into p by the rules the engine reads
// JSON with (Python's json.loads): integers exact at any size, a float
// kept as the float its text names, keys in the text's order, a later
// duplicate key replacing the earlier's value in its place. null is the
// zero Payload. It is MarshalJSON's inverse, so a document Read answered
// can be stored as JSON and given back to MergeDocuments unchanged.
func (p *Payload) UnmarshalJSON(data []byte) error {
	v, err := pyjson.Decode(string(data))
	if err != nil {
		return fmt.Errorf("sweepstate: a payload is a JSON object: %w", err)
	}
	if v == nil {
		*p = Payload{}
		return nil
	}
	doc, isMap := v.(*value.Map)
	if !isMap {
		return errors.New("sweepstate: a payload is a JSON object")
	}
	*p = Payload{doc}
	return nil
}

// ErrNoPayload is Decode's error for an answer that has no payload.
var ErrNoPayload = errors.New("sweepstate: the answer has no payload")

// Decode stores the payload in v as encoding/json's Unmarshal would from
// MarshalJSON's bytes, with json.Decoder.UseNumber: a number decoded into
// an interface is a json.Number holding the payload's text, so integers
// beyond 64 bits and a float's digits survive (see Payload). A payload
// holding NaN or Infinity (only a hand-edited or legacy file has them)
// does not decode: encoding/json has no such numbers.
func (p Payload) Decode(v any) error {
	if p.doc == nil {
		return ErrNoPayload
	}
	dec := json.NewDecoder(bytes.NewReader(pyjson.Encode(p.doc)))
	dec.UseNumber()
	return dec.Decode(v)
}

// Decode is r.Payload.Decode(v).
func (r Result) Decode(v any) error { return r.Payload.Decode(v) }

// Cursor is CursorGet's answer: the source's cursor, and whether it has
// one. A cursor stored as another value than text (import-legacy keeps a
// legacy file's number as it is) comes as Python's str() of it, the text
// CursorAdvance compares a new cursor with. It is false for any other
// answer.
func (r Result) Cursor() (cursor string, ok bool) {
	if r.Word != WordOK || r.Payload.doc == nil || r.Payload.doc.Len() != 1 {
		return "", false
	}
	v, has := r.Payload.doc.Get("cursor")
	if !has || v == nil {
		return "", false
	}
	return sweepcore.PyStr(v), true
}

// Downgraded is Validate's answer: the keys ("source:id") of the items it
// downgraded to fix_pending, sorted; nil for any other answer.
func (r Result) Downgraded() []string {
	if r.Word != WordOK || r.Payload.doc == nil || r.Payload.doc.Len() != 1 {
		return nil
	}
	list, _ := r.Payload.doc.Get("downgraded")
	items, isList := list.([]value.Value)
	if !isList {
		return nil
	}
	keys := make([]string, 0, len(items))
	for _, k := range items {
		s, isString := k.(string)
		if !isString {
			return nil
		}
		keys = append(keys, s)
	}
	return keys
}
