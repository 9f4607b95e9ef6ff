package value

import (
	"fmt"
	"math"
	"math/big"
	"runtime"
	"strconv"
	"testing"
)

// TestArenaPartsAreOrdinary: what an Arena hands out is what the plain
// constructors make (same types, same values, comparable with ==), a nil
// Arena included, and it survives collections; writing to one part (an
// append, a Set past the size, arithmetic on an integer) never changes a
// neighbour from the same block.
func TestArenaPartsAreOrdinary(t *testing.T) {
	ints := []int64{0, 1, -1, 7, -7, 1 << 40, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	floats := []float64{0, math.Copysign(0, -1), 0.25, -1e300, math.Inf(1), math.NaN()}
	for _, a := range []*Arena{nil, {}} {
		var strs, fls []Value
		var bigs []*big.Int
		var lists [][]Value
		var boxed []Value
		var maps []*Map
		for i := range 3 * arenaBlock {
			strs = append(strs, a.String("s"+strconv.Itoa(i)))
			fls = append(fls, a.Float(floats[i%len(floats)]))
			bigs = append(bigs, a.Int(ints[i%len(ints)]))
			l := a.List(2)
			l[0], l[1] = a.String("x"), a.Int(int64(i))
			lists = append(lists, l)
			boxed = append(boxed, a.ListValue(l))
			m := a.NewMapSize(2)
			m.Set("a", a.String(strconv.Itoa(i)))
			m.Set("b", a.Int(int64(-i)))
			maps = append(maps, m)
		}
		large := a.NewMapSize(indexThreshold + 3)
		for i := range indexThreshold + 5 {
			large.Set(strconv.Itoa(i), a.Int(int64(i)))
		}
		runtime.GC()
		// Writes to every other part, each of which must stay its own.
		for i := 0; i < len(lists); i += 2 {
			lists[i] = append(lists[i], "grown")
			maps[i].Set("c", true)
			bigs[i].Add(bigs[i], bigs[i]) // doubles, may need a second word
		}
		runtime.GC()
		for i := range strs {
			if s, ok := strs[i].(string); !ok || s != "s"+strconv.Itoa(i) || strs[i] != Value("s"+strconv.Itoa(i)) {
				t.Fatalf("arena %v: string %d is %#v", a != nil, i, strs[i])
			}
			f := floats[i%len(floats)]
			if !Equal(fls[i], f) || fmt.Sprint(fls[i]) != fmt.Sprint(f) {
				t.Fatalf("arena %v: float %d is %#v, want %v", a != nil, i, fls[i], f)
			}
			want := new(big.Int).SetInt64(ints[i%len(ints)])
			if i%2 == 0 {
				want.Add(want, want)
			}
			if bigs[i].Cmp(want) != 0 || bigs[i].String() != want.String() {
				t.Fatalf("arena %v: integer %d is %s, want %s", a != nil, i, bigs[i], want)
			}
			wantList := []Value{"x", Int(int64(i))}
			wantMap := NewMap()
			wantMap.Set("a", strconv.Itoa(i))
			wantMap.Set("b", Int(int64(-i)))
			if i%2 == 0 {
				wantList = append(wantList, "grown")
				wantMap.Set("c", true)
			}
			if !EqualOrdered(lists[i], wantList) || !EqualOrdered(maps[i], wantMap) || !EqualOrdered(boxed[i], wantList[:2]) {
				t.Fatalf("arena %v: part %d: list %v, map %v", a != nil, i, lists[i], maps[i].Keys())
			}
		}
		if large.Len() != indexThreshold+5 || !large.Has("0") || !large.Has(strconv.Itoa(indexThreshold+4)) {
			t.Fatalf("arena %v: large map %v", a != nil, large.Keys())
		}
	}
}

func BenchmarkArena(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var a Arena
		for range 1000 {
			m := a.NewMapSize(3)
			m.Set("s", a.String("text"))
			m.Set("n", a.Int(42))
			m.Set("f", a.Float(0.5))
		}
	}
}

// TestMapOfIsSetInOrder: MapOf makes the map that Set in order makes, on
// both sides of the index threshold, with and without repeated keys (a
// repeat keeps its first position and takes its last value), and the
// index answers for every key.
func TestMapOfIsSetInOrder(t *testing.T) {
	for _, n := range []int{0, 1, 5, indexThreshold, indexThreshold + 1, 200} {
		for _, repeats := range []int{0, 1, 3} {
			var keys []string
			var vals []Value
			for i := range n {
				keys = append(keys, fmt.Sprintf("k%03d", i)) // increasing
				vals = append(vals, Int(int64(i)))
			}
			for r := range min(repeats, n) {
				keys = append(keys, keys[(r*7)%n])
				vals = append(vals, "again"+strconv.Itoa(r))
			}
			if repeats == 1 && n > 1 {
				// In increasing order but for one key given twice in a row.
				keys = append(keys[:n:n], keys[n-1])
				vals = append(vals[:n:n], "twice")
			}
			want := NewMapSize(len(keys))
			for i, k := range keys {
				want.Set(k, vals[i])
			}
			for _, a := range []*Arena{nil, {}} {
				got := a.MapOf(keys, vals)
				if !EqualOrdered(got, want) || got.Len() != want.Len() {
					t.Fatalf("n %d, repeats %d, arena %v: keys %v, want %v", n, repeats, a != nil, got.Keys(), want.Keys())
				}
				for i := range want.Len() {
					k, v := want.At(i)
					if g, ok := got.Get(k); !ok || !Equal(g, v) {
						t.Fatalf("n %d, repeats %d: Get(%q) = %v, %v, want %v", n, repeats, k, g, ok, v)
					}
				}
			}
		}
	}
}

// TestLargeMapIndexOnFirstSearch: a large map whose index is built by its
// first search answers the same from goroutines searching at once (run
// with -race), and after a Delete and more Sets.
func TestLargeMapIndexOnFirstSearch(t *testing.T) {
	var a Arena
	var keys []string
	var vals []Value
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("k%03d", i)) // increasing: no index yet
		vals = append(vals, Int(int64(i)))
	}
	m := a.MapOf(keys, vals)
	done := make(chan error)
	for g := range 4 {
		go func() {
			for i := range 100 {
				k := keys[(i+g*25)%100]
				if v, ok := m.Get(k); !ok || !Equal(v, Int(int64((i+g*25)%100))) {
					done <- fmt.Errorf("Get(%q) = %v, %v", k, v, ok)
					return
				}
			}
			if m.Has("absent") {
				done <- fmt.Errorf("Has(absent)")
				return
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	m.Delete("k050")
	m.Set("k050", "back")
	m.Set("new", true)
	for i, k := range keys {
		want := Value(Int(int64(i)))
		if k == "k050" {
			want = "back"
		}
		if v, ok := m.Get(k); !ok || !Equal(v, want) {
			t.Fatalf("after Delete and Set: Get(%q) = %v, %v", k, v, ok)
		}
	}
	if last, _ := m.At(m.Len() - 1); last != "new" || !m.Has("new") || m.Len() != 101 {
		t.Fatalf("after Delete and Set: %d keys, last %q", m.Len(), last)
	}
}
