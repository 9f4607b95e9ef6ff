package sweepstate

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/model/value"
)

// mergeBenchTexts are the three files of sweepbench's merge form of n
// items: the benchmark state as the base; ours changed the status of one
// item in a hundred, added a hundred items and took the lease; theirs
// changed the title of another item in a hundred, added a hundred items
// and advanced the cursor.
func mergeBenchTexts(t *testing.T, n int) [3]string {
	base := benchseed.SweepState(n)
	texts := [3]string{string(base)}
	for i, side := range []string{"ours", "theirs"} {
		doc, err := yamlsubset.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		items := sweepcore.MapAt(doc, "items")
		offset, field := 0, "status"
		if side == "theirs" {
			offset, field = 50, "title"
		}
		for j := offset; j < items.Len(); j += 100 {
			_, v := items.At(j)
			v.(*value.Map).Set(field, side+" changed this")
		}
		for j := range 100 {
			item := value.NewMap()
			item.Set("source", "slack:C42")
			item.Set("title", "new on "+side)
			items.Set(fmt.Sprintf("slack:C42:%s-%d", side, j), item)
		}
		if side == "ours" {
			sweepcore.MapAt(doc, "lease").Set("writer", "w2")
		} else {
			sweepcore.MapAt(sweepcore.MapAt(doc, "sources"), "slack:C42").Set("cursor", "1719900000.000200")
		}
		texts[1+i] = string(yamlsubset.Emit(doc))
	}
	return texts
}

// TestMergeFastPathMemoryIsFlat: the fast path holds nothing per item
// beyond the three texts. It reads the texts it is given, lists none of
// their entries and writes the result as it goes, so the bytes it
// allocates to merge sweepbench's three files of 20,000 items, none of
// whose items needs a parse, are those it allocates for 2,000 items, give
// or take a few KiB (the top level's few values; measured the same to the
// byte here); a list of the entries (32 bytes an entry and input) or the
// result held in pieces until the end would add about 1.7 MB. The least
// of three runs at each size, so a collection or another goroutine's
// allocation cannot make it fail.
func TestMergeFastPathMemoryIsFlat(t *testing.T) {
	const small, large = 2000, 20000
	allocated := func(texts [3]string) uint64 {
		least := ^uint64(0)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, merge, decided := mergeTextsFast(texts[0], texts[1], texts[2], PublishedTheirs)
			if !decided || merge == nil {
				t.Fatalf("the fast path did not merge: %v %s", decided, res.Word)
			}
			if _, err := merge.writeTo(io.Discard); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return least
	}
	smallTexts, largeTexts := mergeBenchTexts(t, small), mergeBenchTexts(t, large)
	a, b := allocated(smallTexts), allocated(largeTexts)
	perItem := (float64(b) - float64(a)) / (large - small)
	t.Logf("allocated: %d bytes at %d items, %d at %d items (%.2f bytes an item more)", a, small, b, large, perItem)
	if b > a+8<<10 {
		t.Errorf("merging %d items allocates %d bytes, %d items %d: %.2f bytes more an item, not flat", large, b, small, a, perItem)
	}
	// The test measures the fast path: every item of these files is
	// copied as text, none parsed.
	_, merge, _ := mergeTextsFast(largeTexts[0], largeTexts[1], largeTexts[2], PublishedTheirs)
	if _, err := merge.writeTo(io.Discard); err != nil || merge.runs < 2*large/100 {
		t.Fatalf("%d runs of copied entries, want one or more for each changed item (%v)", merge.runs, err)
	}
}
