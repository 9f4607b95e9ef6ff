package sweepstate

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/model/value"
)

// TestWriteWholeWritesTheMerge: writeMerge's general path (taken only
// when the fast path cannot decide) writes the merged text, the same
// bytes the fast path writes, for an OK answer, and writes nothing for an
// input that cannot be read.
func TestWriteWholeWritesTheMerge(t *testing.T) {
	base := string(benchseed.SweepState(5))
	ours := strings.Replace(base, "Item 2:", "Item two:", 1)
	theirs := strings.Replace(base, "Item 4:", "Item four:", 1)
	both := strings.Replace(ours, "Item 4:", "Item four:", 1)
	if ours == base || theirs == base {
		t.Fatal("the benchmark file lacks the item titles this test changes")
	}
	var b strings.Builder
	calls := 0
	to := func(write func(io.Writer) error) error {
		calls++
		b.Reset()
		return write(&b)
	}
	res, err := writeWhole(base, ours, theirs, PublishedOurs, to)
	if err != nil || res.Word != WordOK || calls != 1 || b.String() != both {
		t.Fatalf("writeWhole: %s, %v, %d writes; merged\n%s\nwant both changes\n%s", res.Word, err, calls, b.String(), both)
	}
	if _, fast := MergeTexts(base, ours, theirs, PublishedOurs); string(fast) != b.String() {
		t.Errorf("the fast path wrote\n%s", fast)
	}
	calls = 0
	res, err = writeWhole(base, "schema_version: 1\n<<<<<<< ours\n", theirs, PublishedOurs, to)
	if err != nil || res.Word != WordCorrupt || !strings.HasPrefix(res.Reason, "ours: ") || calls != 0 {
		t.Errorf("writeWhole of an unreadable ours: %s %q, %v, %d writes; want CORRUPT naming ours, none", res.Word, res.Reason, err, calls)
	}
}

// TestMergeKeepsTheItemsOfASideWhenTheOtherHasNone: the items of a
// merge where ours holds none and theirs holds many (more than sixteen
// times ours', which once sized the result's map below zero) are theirs,
// in their order, and ours' other change is kept.
func TestMergeKeepsTheItemsOfASideWhenTheOtherHasNone(t *testing.T) {
	base := sweepcore.FreshDoc()
	ours := sweepcore.FreshDoc()
	run := value.NewMap()
	run.Set("timestamp", "2026-07-02T12:00:00Z")
	ours.Set("last_run", run)
	theirs := sweepcore.FreshDoc()
	items := sweepcore.MapAt(theirs, "items")
	for i := range 17 {
		item := value.NewMap()
		item.Set("source", "gh")
		item.Set("status", "ingested")
		items.Set(fmt.Sprintf("gh:%02d", i), item)
	}
	for _, pub := range []Published{PublishedOurs, PublishedTheirs} {
		doc, _ := mergeLoaded(base, ours, theirs, pub)
		if got := sweepcore.MapAt(doc, "items").Keys(); !slices.Equal(got, items.Keys()) {
			t.Errorf("published %d: items %v, want theirs' %v", pub, got, items.Keys())
		}
		if !value.Equal(sweepcore.MapGet(doc, "last_run"), run) {
			t.Errorf("published %d: last_run %v, want ours'", pub, sweepcore.MapGet(doc, "last_run"))
		}
	}
}
