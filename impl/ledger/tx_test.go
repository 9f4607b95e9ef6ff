package ledger

import (
	"context"
	"errors"
	"testing"
)

// TestTxnQueryRowReportsPrepareError: when a statement cannot be prepared
// (here: the context already ended), txn.QueryRowContext still returns a
// row whose Scan reports the error, and the failed statement is not cached.
func TestTxnQueryRowReportsPrepareError(t *testing.T) {
	l, _, _ := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tx := &txn{l: l, ctx: ctx}
	const q = "SELECT count(*) FROM tasks"
	var n int
	if err := tx.QueryRowContext(ctx, q).Scan(&n); !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan after a failed prepare: %v, want context.Canceled", err)
	}
	if _, cached := l.stmts[q]; cached {
		t.Fatal("a statement that failed to prepare was cached")
	}
	live := &txn{l: l, ctx: context.Background()}
	if err := live.QueryRowContext(live.ctx, q).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the same query afterwards: %d, %v", n, err)
	}
}
