package ledger

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// pagesFetched is the number of pages the ledger's connection has asked
// its page cache for so far (hits and misses): SQLite's own count of the
// work a statement did, the same on every run of the same statements on
// the same file, unlike a time.
func pagesFetched(t *testing.T, l *Ledger) int {
	t.Helper()
	total := 0
	err := l.conn.Raw(func(dc any) error {
		st, ok := dc.(interface {
			Status(sqlite.DBStatusOp, bool) (int, int, error)
		})
		if !ok {
			t.Fatal("the driver connection has no Status")
		}
		for _, op := range []sqlite.DBStatusOp{sqlite.DBStatusCacheHit, sqlite.DBStatusCacheMiss} {
			n, _, err := st.Status(op, false)
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// prunePages seeds the benchmark's ledger of n tasks, ends every tree
// (a reconcile with no grace), and counts the pages a prune (dry run or
// apply) fetches with batches of at most 4 candidate roots.
func prunePages(t *testing.T, n int, dryRun bool) int {
	t.Helper()
	const now = 1700000000.0
	path := filepath.Join(privateDir(t), "ledger.sqlite")
	if err := seedBenchmark(path, n, now); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, Options{AllowExternalACL: onWindows, Clock: fixedClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Reconcile(ReconcileOptions{ActiveGrace: new(time.Duration(0)), DeliveryGrace: new(time.Duration(0))}); err != nil {
		t.Fatal(err)
	}
	SetPruneBatch(l, 4, 4)
	before := pagesFetched(t, l)
	cutoff := timeAt(now + 1)
	rep, err := l.PruneContext(context.Background(), PruneOptions{EndedBefore: cutoff, DryRun: dryRun})
	if err != nil {
		t.Fatal(err)
	}
	if want := n * 7 / 10; rep.TreesRemoved != want {
		t.Fatalf("%d trees removed of %d tasks, want %d", rep.TreesRemoved, n, want)
	}
	return pagesFetched(t, l) - before
}

// TestPruneCostGrowsLinearly: a prune's work grows with the ledger, not
// with the ledger times its number of batches. Four times the tasks (and
// so the batches) of the benchmark's ledger at most a little more than
// quadruples the pages a dry run or an apply fetches; a prune that reads
// task_events whole once per batch fetches about sixteen times as many.
func TestPruneCostGrowsLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds two ledgers of a few thousand tasks")
	}
	for _, dryRun := range []bool{true, false} {
		small, large := prunePages(t, 800, dryRun), prunePages(t, 3200, dryRun)
		ratio := float64(large) / float64(small)
		t.Logf("dry run %v: %d pages at 800 tasks, %d at 3,200 (x%.2f)", dryRun, small, large, ratio)
		if ratio > 5 {
			t.Errorf("dry run %v: four times the ledger multiplied the pages a prune fetches by %.2f (%d -> %d)", dryRun, ratio, small, large)
		}
	}
}
