package value

import (
	"math/big"
	"unsafe"
)

// Arena hands out the parts a reader builds many of (maps with their key
// and value slices, lists, small integers, boxed strings and floats) from
// blocks it allocates arenaBlock at a time, so a document of many small
// items costs a few allocations per block rather than several per item.
//
// What it returns is ordinary: a map from an Arena behaves as any other
// (a Set past its size moves its slices to the heap), an integer is a
// *big.Int of its own, a string is a string. The blocks stay alive while
// anything carved from them does, so one Arena serves one document. The
// zero Arena is ready to use; a nil *Arena allocates each part on its own.
// An Arena is not safe for concurrent use.
type Arena struct {
	maps   pool[Map]
	keys   pool[string]
	vals   pool[Value]
	ints   pool[big.Int]
	words  pool[big.Word]
	strs   pool[string]
	floats pool[float64]
	lists  pool[[]Value]
}

// Blocks start at firstBlock elements and double up to arenaBlock, so a
// small document does not pay for large blocks; a request for more than
// a quarter of arenaBlock gets its own allocation, so a block is never
// mostly wasted.
const (
	firstBlock = 16
	arenaBlock = 1024
)

// pool is one element type's current block.
type pool[T any] struct {
	free []T
	next int // the size of the next block; 0 before the first
}

// carve returns the next n elements of p's block (length n, capacity n, so
// an append to the result never writes into its neighbour), starting a new
// block when the current one is short.
func carve[T any](p *pool[T], n int) []T {
	if n > arenaBlock/4 {
		return make([]T, n)
	}
	if len(p.free) < n {
		size := max(p.next, firstBlock, n)
		p.next = min(2*size, arenaBlock)
		p.free = make([]T, size)
	}
	s := p.free[:n:n]
	p.free = p.free[n:]
	return s
}

// NewMapSize is NewMapSize(n) from the arena's blocks.
func (a *Arena) NewMapSize(n int) *Map {
	if a == nil {
		return NewMapSize(n)
	}
	m := &carve(&a.maps, 1)[0]
	m.keys = carve(&a.keys, n)[:0]
	m.vals = carve(&a.vals, n)[:0]
	return m
}

// MapOf is the map that NewMapSize(len(keys)) and then Set(keys[i],
// vals[i]) for each i in order make (a repeated key keeps its first
// position and its last value), from the arena's blocks. Keys in strictly
// increasing order (as the engine writes them) cannot repeat, so a large
// map of such keys is built without hashing any (its index waits for its
// first search); other large maps are checked for repeats through the
// index, one hash operation per key.
func (a *Arena) MapOf(keys []string, vals []Value) *Map {
	n := len(keys)
	m := a.NewMapSize(n)
	unique := false
	if n > indexThreshold {
		unique = true
		for i := 1; i < n && unique; i++ {
			unique = keys[i-1] < keys[i]
		}
		if !unique {
			index := make(map[string]int, n)
			for i, k := range keys {
				index[k] = i
			}
			if unique = len(index) == n; unique {
				m.index.Store(&index)
			}
		}
	}
	if unique {
		m.keys = append(m.keys, keys...)
		m.vals = append(m.vals, vals...)
		return m
	}
	for i, k := range keys {
		m.Set(k, vals[i])
	}
	return m
}

// List returns a list of n nil values from the arena's blocks.
func (a *Arena) List(n int) []Value {
	if a == nil {
		return make([]Value, n)
	}
	return carve(&a.vals, n)
}

// Int returns a new integer set to n, from the arena's blocks.
func (a *Arena) Int(n int64) *big.Int {
	if a == nil {
		return big.NewInt(n)
	}
	z := &carve(&a.ints, 1)[0]
	u := uint64(n)
	if n < 0 {
		u = -u
	}
	if u == 0 {
		return z
	}
	if uint64(big.Word(u)) != u {
		return z.SetInt64(n) // a 32-bit word: let big.Int allocate
	}
	w := carve(&a.words, 1)
	w[0] = big.Word(u)
	z.SetBits(w)
	if n < 0 {
		z.Neg(z)
	}
	return z
}

// String returns s as a Value. Converting a string to an interface copies
// its header into an allocation of its own; here the header is stored in
// the arena's block and the interface points at it.
func (a *Arena) String(s string) Value {
	if a == nil {
		return s
	}
	p := &carve(&a.strs, 1)[0]
	*p = s
	return pointAt(Value(""), unsafe.Pointer(p))
}

// Float returns f as a Value, stored in the arena's block (see String).
func (a *Arena) Float(f float64) Value {
	if a == nil {
		return f
	}
	p := &carve(&a.floats, 1)[0]
	*p = f
	return pointAt(Value(0.0), unsafe.Pointer(p))
}

// ListValue returns l as a Value, its slice header stored in the arena's
// block (see String).
func (a *Arena) ListValue(l []Value) Value {
	if a == nil {
		return l
	}
	p := &carve(&a.lists, 1)[0]
	*p = l
	return pointAt(Value([]Value(nil)), unsafe.Pointer(p))
}

// pointAt returns v, an interface holding a non-pointer type, with its data
// word pointing at p, which must hold a value of that type and is never
// written again. An interface value is two words, the type and a pointer
// to the data; a conversion allocates the data, which p replaces.
func pointAt(v Value, p unsafe.Pointer) Value {
	(*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] = p
	return v
}
