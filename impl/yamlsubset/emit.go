package yamlsubset

import (
	"cmp"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/stateguard/stateguard/impl/pyjson"
	"github.com/stateguard/stateguard/model/value"
)

// Emit writes doc in the canonical form of contract section 14.
func Emit(doc *value.Map) []byte {
	// Sizing the buffer once keeps a multi-megabyte file from being copied
	// through every doubling of append.
	e := emitter{buf: make([]byte, 0, estimateSize(doc, 0)+64)}
	e.block(doc, 0, levelTop)
	return e.buf
}

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

// preferredRank maps each preferred key of a level to its position.
var preferredRank = map[level]map[string]int{
	levelTop:     rankOf(topOrder),
	levelLease:   rankOf(leaseOrder),
	levelLastRun: rankOf(lastRunOrder),
	levelItem:    rankOf(itemOrder),
	levelSorted:  {},
}

func rankOf(keys []string) map[string]int {
	m := make(map[string]int, len(keys))
	for i, k := range keys {
		m[k] = i
	}
	return m
}

// rankedKey is a key with its place in the preferred order (the length of
// that order for keys not listed).
type rankedKey struct {
	rank int
	key  string
}

// orderedKeys returns m's keys: the preferred ones first in their listed
// order, then the rest by code point (byte order of valid UTF-8).
func orderedKeys(m *value.Map, l level, scratch []rankedKey) []rankedKey {
	ranks := preferredRank[l]
	scratch = scratch[:0]
	for _, k := range m.Keys() {
		r, ok := ranks[k]
		if !ok {
			r = len(ranks)
		}
		scratch = append(scratch, rankedKey{r, k})
	}
	slices.SortFunc(scratch, func(a, b rankedKey) int {
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		return strings.Compare(a.key, b.key)
	})
	return scratch
}

type emitter struct {
	buf     []byte
	scratch [][]rankedKey // one key list per depth, reused across siblings
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
		for _, k := range t.Keys() {
			x, _ := t.Get(k)
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
		k := rk.key
		v, _ := m.Get(k)
		e.indent(depth)
		e.key(k)
		if child, ok := v.(*value.Map); ok && child.Len() > 0 {
			e.buf = append(e.buf, ':', '\n')
			e.block(child, depth+1, childLevel(l, k))
			continue
		}
		e.buf = append(e.buf, ':', ' ')
		e.buf = appendInline(e.buf, v)
		e.buf = append(e.buf, '\n')
	}
}

// appendInline writes a scalar, a list or a map as one line of JSON with
// the file's string form, ", " and ": " separators and sorted map keys.
func appendInline(dst []byte, v value.Value) []byte {
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
		return AppendQuoted(dst, t)
	case []value.Value:
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendInline(dst, x)
		}
		return append(dst, ']')
	case *value.Map:
		keys := t.Keys()
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendQuoted(dst, k)
			dst = append(dst, ": "...)
			x, _ := t.Get(k)
			dst = appendInline(dst, x)
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}
