package yamlsubset

import (
	"cmp"
	"math/big"
	"slices"

	"github.com/stateguard/stateguard/impl/pyjson"
	"github.com/stateguard/stateguard/model/value"
)

// Emit writes doc in the canonical form of contract section 14.
func Emit(doc *value.Map) []byte {
	e := emitter{buf: make([]byte, 0, 4096)}
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

func preferredOrder(l level) []string {
	switch l {
	case levelTop:
		return topOrder
	case levelLease:
		return leaseOrder
	case levelLastRun:
		return lastRunOrder
	case levelItem:
		return itemOrder
	}
	return nil
}

// orderedKeys returns m's keys: the preferred ones first in their listed
// order, then the rest by code point (byte order of valid UTF-8).
func orderedKeys(m *value.Map, l level) []string {
	keys := m.Keys()
	pref := preferredOrder(l)
	rank := func(k string) int {
		for i, p := range pref {
			if p == k {
				return i
			}
		}
		return len(pref)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return keys
}

type emitter struct {
	buf []byte
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
	for _, k := range orderedKeys(m, l) {
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
