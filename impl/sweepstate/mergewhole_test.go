package sweepstate

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
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

// TestMergeFastPathPassesOverTheBasesDroppedItems: the fast path walks
// the base past items neither side still holds; one the base holds
// parsed (its entry not in Emit's form) is passed over too, and the
// merge is the whole path's.
func TestMergeFastPathPassesOverTheBasesDroppedItems(t *testing.T) {
	base := "schema_version: 1\nsources: {}\nitems:\n" +
		"  \"gh:1\":\n    title: \"one\"\n    source: \"gh\"\n" + // not Emit's key order
		"  \"gh:2\":\n    source: \"gh\"\n    title: \"two\"\n"
	ours := "schema_version: 1\nsources: {}\nitems:\n  \"gh:2\":\n    source: \"gh\"\n    title: \"two, retitled\"\n"
	theirs := "schema_version: 1\nsources: {}\nitems:\n  \"gh:2\":\n    source: \"gh\"\n    title: \"two\"\n" +
		"last_run:\n  timestamp: \"2026-07-02T12:00:00Z\"\n"
	side, failed := loadMergeSide(base)
	if failed != nil || !slices.Contains(side.keys, "gh:1") {
		t.Fatalf("the base's gh:1 is not parsed: %v, %v", failed, side)
	}
	res, fast, decided := mergeTextsFast(base, ours, theirs, PublishedOurs)
	if !decided || fast == nil || res.Word != WordOK {
		t.Fatalf("fast path: decided %v, %s", decided, res.Word)
	}
	_, b, err := writeFast(fast)
	if err != nil {
		t.Fatal(err)
	}
	_, doc := mergeTextsWhole(base, ours, theirs, PublishedOurs)
	want := string(yamlsubset.Emit(doc))
	if string(b) != want || !strings.Contains(want, "two, retitled") || strings.Contains(want, "gh:1") {
		t.Errorf("fast path merged\n%s\nthe whole path\n%s", b, want)
	}
}

// TestMergeFastPathDowngradesEmptyEvidence: an item one side added,
// closed with every evidence field an empty string, is made fix_pending
// by the fast path as by the whole path; the fast path may copy a
// closed entry as it is only when each field holds text.
func TestMergeFastPathDowngradesEmptyEvidence(t *testing.T) {
	base := sweepcore.FreshDoc()
	ours := sweepcore.FreshDoc()
	item := value.NewMap()
	item.Set("source", "gh")
	item.Set("status", "closed")
	for _, f := range sweepcore.EvidenceFields {
		item.Set(f, "")
	}
	sweepcore.MapAt(ours, "items").Set("gh:1", item)
	theirs := sweepcore.FreshDoc()
	run := value.NewMap()
	run.Set("timestamp", "2026-07-02T12:00:00Z")
	theirs.Set("last_run", run)
	texts := [3]string{string(yamlsubset.Emit(base)), string(yamlsubset.Emit(ours)), string(yamlsubset.Emit(theirs))}
	res, fast, decided := mergeTextsFast(texts[0], texts[1], texts[2], PublishedOurs)
	if !decided || fast == nil || res.Word != WordOK {
		t.Fatalf("fast path: decided %v, %s", decided, res.Word)
	}
	res, b, err := writeFast(fast)
	if err != nil {
		t.Fatal(err)
	}
	_, doc := mergeTextsWhole(texts[0], texts[1], texts[2], PublishedOurs)
	want := string(yamlsubset.Emit(doc))
	if string(b) != want || !strings.Contains(want, `status: "fix_pending"`) {
		t.Errorf("fast path merged\n%s\nthe whole path\n%s", b, want)
	}
	if n, _ := res.Payload.doc.Get("evidence_downgrades"); !value.Equal(n, value.Int(1)) {
		t.Errorf("evidence_downgrades %v, want 1", n)
	}
}
