package value

import (
	"fmt"
	"math"
	"testing"
)

// TestMapKeepsPythonDictOrder checks insertion order, overwrite in place and
// delete, on both sides of the index threshold.
func TestMapKeepsPythonDictOrder(t *testing.T) {
	for _, n := range []int{3, indexThreshold + 5} {
		m := NewMap()
		for i := 0; i < n; i++ {
			m.Set(fmt.Sprint("k", i), i)
		}
		m.Set("k1", "again") // keeps position 1
		m.Delete("k0")
		m.Delete("absent")
		m.Set("k0", "back") // re-added at the end
		keys := m.Keys()
		if len(keys) != n || keys[0] != "k1" || keys[n-1] != "k0" {
			t.Fatalf("n=%d: keys %v", n, keys)
		}
		if v, _ := m.Get("k1"); v != "again" {
			t.Fatalf("n=%d: k1 = %v", n, v)
		}
		for i := 2; i < n; i++ {
			if v, ok := m.Get(fmt.Sprint("k", i)); !ok || v != i {
				t.Fatalf("n=%d: k%d = %v %v", n, i, v, ok)
			}
		}
		if m.Has("absent") {
			t.Fatal("absent key reported present")
		}
	}
}

func TestEqualDistinguishesKindsAndSigns(t *testing.T) {
	a, b := NewMap(), NewMap()
	a.Set("x", Int(1))
	a.Set("y", []Value{0.5, nil})
	b.Set("y", []Value{0.5, nil})
	b.Set("x", Int(1))
	if !Equal(a, b) || EqualOrdered(a, b) {
		t.Fatal("maps with the same content in another order: Equal must hold, EqualOrdered must not")
	}
	c := Clone(a).(*Map)
	if !EqualOrdered(a, c) {
		t.Fatal("clone differs")
	}
	c.Set("x", 1.0)
	if Equal(a, c) {
		t.Fatal("integer 1 must not equal float 1.0")
	}
	if Equal(0.0, math.Copysign(0, -1)) {
		t.Fatal("0.0 must not equal -0.0")
	}
}

// TestNewMapSizeAndAt: a presized map behaves like NewMap on both sides of
// the index threshold, and At walks insertion order.
func TestNewMapSizeAndAt(t *testing.T) {
	for _, n := range []int{0, 3, indexThreshold + 5} {
		m := NewMapSize(n)
		for i := 0; i < n+2; i++ { // past the size: still grows
			m.Set(fmt.Sprint("k", i), Int(int64(i)))
		}
		m.Set("k0", "again")
		m.Delete("k1")
		want := NewMap()
		for i := 0; i < n+2; i++ {
			want.Set(fmt.Sprint("k", i), Int(int64(i)))
		}
		want.Set("k0", "again")
		want.Delete("k1")
		if !EqualOrdered(m, want) {
			t.Fatalf("n=%d: presized map differs", n)
		}
		for i, k := range want.Keys() {
			wv, _ := want.Get(k)
			if gk, gv := m.At(i); gk != k || !Equal(gv, wv) {
				t.Fatalf("n=%d: At(%d) = %v %v", n, i, gk, gv)
			}
		}
		if v, ok := m.Get("k0"); !ok || v != "again" {
			t.Fatalf("n=%d: Get(k0) = %v %v", n, v, ok)
		}
	}
}
