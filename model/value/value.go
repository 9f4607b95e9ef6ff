// Package value holds the plain data types shared by the sweep model and the
// sweep engine: an exact, JSON-like value tree with insertion-ordered maps.
//
// It deliberately contains no rules of the sweep contract (no key orders, no
// truthiness, no formatting): both the model and the engine decide those on
// their own, and only tests bring the two together.
//
// A Value is one of:
//
//	nil          null
//	bool         true / false
//	*big.Int     an integer of any size (never nil)
//	float64      a float; NaN and the infinities only inside a list read
//	             from a state file (the reference writer puts them there)
//	string       text (valid UTF-8 is not enforced here)
//	[]Value      a list
//	*Map         a map with string keys in insertion order
package value

import (
	"math"
	"math/big"
	"sync/atomic"
)

// Value is any of the types listed in the package comment.
type Value = any

// Map is a string-keyed map that remembers the order keys were first set,
// like a Python dict: setting an existing key keeps its position.
//
// Small maps (an item has about ten fields) are searched linearly; a map of
// more than indexThreshold keys builds an index on its first search, so a
// large map that is only walked (a document read and printed) never pays
// for one. Searching (Get, Has) may build it and is still safe from
// several goroutines at once, as any read-only use of a Map is.
type Map struct {
	keys []string
	vals []Value
	// index maps each key to its position, or is nil (not built yet, or
	// dropped by a Delete); when set it is exact.
	index atomic.Pointer[map[string]int]
}

const indexThreshold = 16

// NewMap returns an empty map.
func NewMap() *Map { return &Map{} }

// NewMapSize returns an empty map with room for n keys, so a reader that
// knows the count up front fills it without regrowing.
func NewMapSize(n int) *Map {
	return &Map{keys: make([]string, 0, n), vals: make([]Value, 0, n)}
}

// Len is the number of keys.
func (m *Map) Len() int { return len(m.keys) }

// Keys returns the keys in insertion order. The slice is a copy.
func (m *Map) Keys() []string { return append([]string(nil), m.keys...) }

// At returns the i-th key and its value in insertion order, 0 <= i < Len();
// with Len it walks a map without copying its keys.
func (m *Map) At(i int) (string, Value) { return m.keys[i], m.vals[i] }

func (m *Map) find(k string) int {
	if len(m.keys) > indexThreshold {
		index := m.index.Load()
		if index == nil {
			index = m.buildIndex()
		}
		if i, ok := (*index)[k]; ok {
			return i
		}
		return -1
	}
	for i, key := range m.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// Get returns the value stored under k.
func (m *Map) Get(k string) (Value, bool) {
	if i := m.find(k); i >= 0 {
		return m.vals[i], true
	}
	return nil, false
}

// Has reports whether k is present.
func (m *Map) Has(k string) bool { return m.find(k) >= 0 }

// Set stores v under k, keeping k's position when it is already present.
func (m *Map) Set(k string, v Value) {
	if i := m.find(k); i >= 0 {
		m.vals[i] = v
		return
	}
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, v)
	if index := m.index.Load(); index != nil {
		(*index)[k] = len(m.keys) - 1
	}
}

// Delete removes k if present.
func (m *Map) Delete(k string) {
	i := m.find(k)
	if i < 0 {
		return
	}
	m.keys = append(m.keys[:i:i], m.keys[i+1:]...)
	m.vals = append(m.vals[:i:i], m.vals[i+1:]...)
	m.index.Store(nil) // built again by the next search
}

// buildIndex builds m's index from its keys (which never repeat). Two
// goroutines searching at once may both build one; either is right and
// the first stored stays.
func (m *Map) buildIndex() *map[string]int {
	index := make(map[string]int, len(m.keys))
	for i, k := range m.keys {
		index[k] = i
	}
	if m.index.CompareAndSwap(nil, &index) {
		return &index
	}
	return m.index.Load()
}

// Clone returns a deep copy of v.
func Clone(v Value) Value {
	switch t := v.(type) {
	case *big.Int:
		return new(big.Int).Set(t)
	case []Value:
		out := make([]Value, len(t))
		for i, e := range t {
			out[i] = Clone(e)
		}
		return out
	case *Map:
		out := &Map{keys: append([]string(nil), t.keys...), vals: make([]Value, len(t.vals))}
		for i, e := range t.vals {
			out.vals[i] = Clone(e)
		}
		return out
	default:
		return v
	}
}

// Equal reports whether a and b are the same value. Maps compare by content
// regardless of key order; floats compare by bits, so -0.0 differs from 0.0;
// an integer never equals a float.
func Equal(a, b Value) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []Value:
		y, ok := b.([]Value)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Map:
		y, ok := b.(*Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			yv, ok := y.Get(k)
			if !ok || !Equal(x.vals[i], yv) {
				return false
			}
		}
		return true
	}
	return false
}

// EqualOrdered is Equal, but maps must also list their keys in the same order.
func EqualOrdered(a, b Value) bool {
	switch x := a.(type) {
	case []Value:
		y, ok := b.([]Value)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualOrdered(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Map:
		y, ok := b.(*Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			if y.keys[i] != k || !EqualOrdered(x.vals[i], y.vals[i]) {
				return false
			}
		}
		return true
	}
	return Equal(a, b)
}

// Int is a convenience constructor for an integer value.
func Int(n int64) *big.Int { return big.NewInt(n) }
