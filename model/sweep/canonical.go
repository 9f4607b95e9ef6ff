package sweep

import (
	"sort"

	"github.com/stateguard/stateguard/model/value"
)

// Key orders of the written file (§15.1). Keys not listed follow, sorted by
// code point.
var (
	topOrder     = []string{"schema_version", "lease", "sources", "items", "last_run"}
	leaseOrder   = []string{"writer", "timestamp", "ttl_minutes"}
	lastRunOrder = []string{"timestamp", "outcome", "writer", "counts"}
	itemOrder    = []string{"source", "status", "sensitive", "title", "url", "body", "quote", "fix_ref", "verified_revision_id", "verified_at"}
)

// Canonical returns doc with every map in the order the engine writes it,
// which is also the order a later read reports (§11, §15.1): the top level in
// topOrder; lease and last_run in their own orders; the maps directly under
// any other top-level key (sources, items, unknown keys) sorted; every map
// deeper than that in item order; maps inside lists sorted.
func Canonical(doc *value.Map) *value.Map {
	out := reorder(doc, topOrder)
	for _, k := range out.Keys() {
		v, _ := out.Get(k)
		m, isMap := v.(*value.Map)
		switch {
		case !isMap:
			out.Set(k, inline(v))
		case k == "lease":
			out.Set(k, deepChildren(reorder(m, leaseOrder)))
		case k == "last_run":
			out.Set(k, deepChildren(reorder(m, lastRunOrder)))
		default:
			out.Set(k, deepChildren(reorder(m, nil)))
		}
	}
	return out
}

// deepChildren puts every value of m into the order of a map two or more
// levels down.
func deepChildren(m *value.Map) *value.Map {
	for _, k := range m.Keys() {
		v, _ := m.Get(k)
		m.Set(k, deep(v))
	}
	return m
}

func deep(v value.Value) value.Value {
	if m, ok := v.(*value.Map); ok {
		return deepChildren(reorder(m, itemOrder))
	}
	return inline(v)
}

// inline orders values written as one-line JSON: map keys sorted, at any
// depth.
func inline(v value.Value) value.Value {
	switch t := v.(type) {
	case *value.Map:
		out := reorder(t, nil)
		for _, k := range out.Keys() {
			e, _ := out.Get(k)
			out.Set(k, inline(e))
		}
		return out
	case []value.Value:
		out := make([]value.Value, len(t))
		for i, e := range t {
			out[i] = inline(e)
		}
		return out
	}
	return v
}

// reorder returns a new map with the keys of m: first those of fixed that
// are present, in that order, then the rest sorted.
func reorder(m *value.Map, fixed []string) *value.Map {
	out := value.NewMap()
	isFixed := map[string]bool{}
	for _, k := range fixed {
		isFixed[k] = true
		if v, ok := m.Get(k); ok {
			out.Set(k, v)
		}
	}
	var rest []string
	for _, k := range m.Keys() {
		if !isFixed[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		v, _ := m.Get(k)
		out.Set(k, v)
	}
	return out
}
