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
//	float64      a finite float (NaN and infinities never appear)
//	string       text (valid UTF-8 is not enforced here)
//	[]Value      a list
//	*Map         a map with string keys in insertion order
package value

import (
	"math"
	"math/big"
)

// Value is any of the types listed in the package comment.
type Value = any

// Map is a string-keyed map that remembers the order keys were first set,
// like a Python dict: setting an existing key keeps its position.
type Map struct {
	keys []string
	vals map[string]Value
}

// NewMap returns an empty map.
func NewMap() *Map { return &Map{vals: map[string]Value{}} }

// Len is the number of keys.
func (m *Map) Len() int { return len(m.keys) }

// Keys returns the keys in insertion order. The slice is a copy.
func (m *Map) Keys() []string { return append([]string(nil), m.keys...) }

// Get returns the value stored under k.
func (m *Map) Get(k string) (Value, bool) {
	v, ok := m.vals[k]
	return v, ok
}

// Has reports whether k is present.
func (m *Map) Has(k string) bool {
	_, ok := m.vals[k]
	return ok
}

// Set stores v under k, keeping k's position when it is already present.
func (m *Map) Set(k string, v Value) {
	if m.vals == nil {
		m.vals = map[string]Value{}
	}
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

// Delete removes k if present.
func (m *Map) Delete(k string) {
	if _, ok := m.vals[k]; !ok {
		return
	}
	delete(m.vals, k)
	for i, key := range m.keys {
		if key == k {
			m.keys = append(m.keys[:i:i], m.keys[i+1:]...)
			break
		}
	}
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
		out := &Map{keys: append([]string(nil), t.keys...), vals: make(map[string]Value, len(t.vals))}
		for k, e := range t.vals {
			out.vals[k] = Clone(e)
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
		for _, k := range x.keys {
			yv, ok := y.vals[k]
			if !ok || !Equal(x.vals[k], yv) {
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
			if y.keys[i] != k || !EqualOrdered(x.vals[k], y.vals[k]) {
				return false
			}
		}
		return true
	}
	return Equal(a, b)
}

// Int is a convenience constructor for an integer value.
func Int(n int64) *big.Int { return big.NewInt(n) }
