package yamlsubset

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/model/value"
)

// Emit writes doc in the canonical form of spec/sweep-state.md §15.1: keys
// in the fixed orders of each depth, strings as JSON strings, floats as
// Python's repr, lists and empty maps as inline JSON.
func Emit(doc *value.Map) []byte {
	// Sizing the buffer once keeps a multi-megabyte file from being copied
	// through every doubling of append.
	e := emitter{buf: make([]byte, 0, estimateSize(doc, 0)+64)}
	e.block(doc, 0, levelTop)
	return e.buf
}

// EmitTo writes the text of Emit(doc) to w in chunks, so a large document
// is never held as one byte slice. It returns the first write error.
func EmitTo(w io.Writer, doc *value.Map) error {
	e := emitter{buf: make([]byte, 0, flushSize+flushSize/4), w: w}
	e.block(doc, 0, levelTop)
	e.flush()
	return e.err
}

// flushSize is how much EmitTo gathers before it writes.
const flushSize = 32 << 10

// level says which key order a block mapping uses; it is decided by the
// mapping's place in the document.
type level int

const (
	levelTop     level = iota // the document itself
	levelLease                // the map under the top-level key "lease"
	levelLastRun              // the map under the top-level key "last_run"
	levelSorted               // the ids under "sources" and "items", and any other top-level key's map
	levelItem                 // every map two or more levels down
)

// Preferred key orders; keys not listed follow, sorted by code point.
var (
	topOrder     = []string{"schema_version", "lease", "sources", "items", "last_run"}
	leaseOrder   = []string{"writer", "timestamp", "ttl_minutes"}
	lastRunOrder = []string{"timestamp", "outcome", "writer", "counts"}
	itemOrder    = []string{"source", "status", "sensitive", "title", "url", "body", "quote", "fix_ref", "verified_revision_id", "verified_at"}
)

// childLevel gives the level of the map stored under key in a map of level l.
// Decision (the contract lists examples only at depth two and below): the
// map directly under an unknown top-level key is sorted like the ids under
// sources and items, and everything below depth one uses the item order.
func childLevel(l level, key string) level {
	if l != levelTop {
		return levelItem
	}
	switch key {
	case "lease":
		return levelLease
	case "last_run":
		return levelLastRun
	}
	return levelSorted
}

// preferredOrder lists each level's preferred keys.
var preferredOrder = [...][]string{
	levelTop:     topOrder,
	levelLease:   leaseOrder,
	levelLastRun: lastRunOrder,
	levelSorted:  nil,
	levelItem:    itemOrder,
}

// rank is k's position in the preferred order of level l, or the length of
// that order for keys not listed. The lists are short: a scan beats a hash.
func rank(l level, k string) int {
	if l == levelItem {
		return itemRank(k)
	}
	order := preferredOrder[l]
	for i, p := range order {
		if p == k {
			return i
		}
	}
	return len(order)
}

// itemRank is rank(levelItem, k), the most frequent case, as one switch.
func itemRank(k string) int {
	switch k {
	case "source":
		return 0
	case "status":
		return 1
	case "sensitive":
		return 2
	case "title":
		return 3
	case "url":
		return 4
	case "body":
		return 5
	case "quote":
		return 6
	case "fix_ref":
		return 7
	case "verified_revision_id":
		return 8
	case "verified_at":
		return 9
	}
	return len(itemOrder)
}

// rankedKey is a key with its rank and its position in the map.
type rankedKey struct {
	rank int
	key  string
	pos  int
}

func compareRanked(a, b rankedKey) int {
	if a.rank != b.rank {
		return cmp.Compare(a.rank, b.rank)
	}
	return strings.Compare(a.key, b.key)
}

// orderedKeys returns m's keys: the preferred ones first in their listed
// order, then the rest by code point (byte order of valid UTF-8). It sorts
// only when m is not already in that order (a parsed canonical file is).
func orderedKeys(m *value.Map, l level, scratch []rankedKey) []rankedKey {
	scratch = slices.Grow(scratch[:0], m.Len())
	sorted := true
	for i := range m.Len() {
		k, _ := m.At(i)
		rk := rankedKey{rank(l, k), k, i}
		if sorted && i > 0 && compareRanked(scratch[i-1], rk) > 0 {
			sorted = false
		}
		scratch = append(scratch, rk)
	}
	if !sorted {
		slices.SortFunc(scratch, compareRanked)
	}
	return scratch
}

type emitter struct {
	buf     []byte
	scratch [][]rankedKey // one key list per depth, reused across siblings
	w       io.Writer     // nil: keep everything in buf
	err     error
}

func (e *emitter) flush() {
	if e.err == nil {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

// estimateSize is a cheap upper-bound-ish guess of the emitted length of v
// as a value at the given depth (escapes aside).
func estimateSize(v value.Value, depth int) int {
	switch t := v.(type) {
	case string:
		return len(t) + 2
	case *big.Int:
		return t.BitLen()/3 + 2
	case float64:
		return 24
	case []value.Value:
		n := 2
		for _, x := range t {
			n += estimateSize(x, depth) + 2
		}
		return n
	case *value.Map:
		n := 2
		for i := range t.Len() {
			k, x := t.At(i)
			n += 2*depth + len(k) + 5 + estimateSize(x, depth+1)
		}
		return n
	}
	return 5
}

func (e *emitter) indent(n int) {
	for range n {
		e.buf = append(e.buf, ' ', ' ')
	}
}

func (e *emitter) key(k string) {
	if IsBareKey(k) {
		e.buf = append(e.buf, k...)
	} else {
		e.buf = AppendQuoted(e.buf, k)
	}
}

// block writes the entries of a non-empty map at the given depth.
func (e *emitter) block(m *value.Map, depth int, l level) {
	if len(e.scratch) <= depth {
		e.scratch = append(e.scratch, nil)
	}
	keys := orderedKeys(m, l, e.scratch[depth])
	e.scratch[depth] = keys
	for _, rk := range keys {
		k, v := m.At(rk.pos)
		e.indent(depth)
		e.key(k)
		if child, ok := v.(*value.Map); ok && child.Len() > 0 {
			e.buf = append(e.buf, ':', '\n')
			e.block(child, depth+1, childLevel(l, k))
			continue
		}
		e.buf = append(e.buf, ':', ' ')
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			// Only a list can hold such a float (the reader and the JSON
			// input admit no other place); should one reach a block, it
			// is written as the reference writes it (repr), which both
			// readers take for the string.
			e.buf = append(e.buf, pyRepr(f)...)
		} else {
			e.buf = appendInline(e.buf, v)
		}
		e.buf = append(e.buf, '\n')
		if e.w != nil && len(e.buf) >= flushSize {
			e.flush()
		}
	}
}

// pyRepr is Python's repr of a non-finite float.
func pyRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case f > 0:
		return "inf"
	}
	return "-inf"
}

// appendInline writes a scalar, a list or a map as one line of JSON with
// the file's string form, ", " and ": " separators and sorted map keys.
func appendInline(dst []byte, v value.Value) []byte {
	return appendInlineQ(dst, v, true)
}

// appendInlineQ is appendInline with its strings written by appendQuoted
// with d6: false writes the characters of D6 raw, as the reference
// writer's json.dumps does.
func appendInlineQ(dst []byte, v value.Value, d6 bool) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if t {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case *big.Int:
		if t.IsInt64() {
			return strconv.AppendInt(dst, t.Int64(), 10)
		}
		return t.Append(dst, 10)
	case float64:
		return pyjson.AppendFloat(dst, t)
	case string:
		return appendQuoted(dst, t, d6)
	case []value.Value:
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendInlineQ(dst, x, d6)
		}
		return append(dst, ']')
	case *value.Map:
		dst = append(dst, '{')
		if keysSorted(t) {
			for i := range t.Len() {
				k, x := t.At(i)
				dst = appendMember(dst, i, k, x, d6)
			}
		} else {
			keys := t.Keys()
			slices.Sort(keys)
			for i, k := range keys {
				x, _ := t.Get(k)
				dst = appendMember(dst, i, k, x, d6)
			}
		}
		return append(dst, '}')
	}
	// Parse and the JSON decoder make only the types above; writing
	// anything else as null would silently lose data.
	panic(fmt.Sprintf("yamlsubset: cannot emit a value of type %T", v))
}

// appendMember writes the i-th member of an inline map.
func appendMember(dst []byte, i int, k string, v value.Value, d6 bool) []byte {
	if i > 0 {
		dst = append(dst, ", "...)
	}
	dst = appendQuoted(dst, k, d6)
	dst = append(dst, ": "...)
	return appendInlineQ(dst, v, d6)
}

// keysSorted reports whether m's keys are already in code point order.
func keysSorted(m *value.Map) bool {
	for i := 1; i < m.Len(); i++ {
		prev, _ := m.At(i - 1)
		k, _ := m.At(i)
		if prev > k {
			return false
		}
	}
	return true
}
