package sweepcore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
)

// TestJoinThatCannotPutTheItemsBackFailsTheWrite: the write of a split
// load puts the items left out back among the ones the decision emitted.
// Should the decision emit an item that was left out (a defect), the join
// declines, and the write must fail with errNotJoined, not succeed with
// nothing written (which would leave an empty state file).
func TestJoinThatCannotPutTheItemsBackFailsTheWrite(t *testing.T) {
	text := string(benchseed.SweepState(3))
	reduced, others, ok := yamlsubset.SplitItems(text, sweeprules.StateLoad(), keepKey("slack:C42:1719900000.000001"))
	if !ok || others.Len() != 2 {
		t.Fatalf("split: ok %v, %d left out; want 2", ok, others.Len())
	}
	// The decision's document as the split gives it joins back to the text.
	kept, failed := loadText(reduced)
	if failed != nil {
		t.Fatal(failed.Reason)
	}
	var b bytes.Buffer
	if err := joinedEmit(yamlsubset.Emit(kept.doc), others)(&b); err != nil || b.String() != text {
		t.Fatalf("join of the kept item: %v, text equal %v", err, b.String() == text)
	}
	// A document that holds the items left out too cannot be joined.
	whole, failed := loadText(text)
	if failed != nil {
		t.Fatal(failed.Reason)
	}
	b.Reset()
	err := joinedEmit(yamlsubset.Emit(whole.doc), others)(&b)
	if !errors.Is(err, errNotJoined) || b.Len() != 0 {
		t.Errorf("join of a document holding the items left out: %v, %d bytes written; want errNotJoined, none", err, b.Len())
	}
}
