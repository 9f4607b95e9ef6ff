package sweepstate

import (
	"io"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
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
