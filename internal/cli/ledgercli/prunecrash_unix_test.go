//go:build unix

package ledgercli_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/envknob"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/tools/planrun/journal"
)

// TestCrashDuringPrune SIGKILLs the real binary at a random moment of a
// prune that takes several batches (20,000 benchmark tasks settled by a
// reconcile with no grace, 14,000 of them finished roots, plus 20 finished trees of
// three tasks made through the API), then checks, before any writer
// runs: the read-only doctor is healthy; each of the 20 trees is whole or
// gone; the finished roots left are a count the batches explain (none
// half-removed: every removed task's tree went with it, which the
// doctor's orphan count shows); and a second prune then removes the rest.
// STATEGUARD_PRUNE_KILLS=N runs N kills (default 4).
func TestCrashDuringPrune(t *testing.T) {
	kills := envknob.Count(t, "STATEGUARD_PRUNE_KILLS", 4)
	dir := t.TempDir()
	bin := ledgerBinary(t)
	planrun, err := journal.BuildPlanrun(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := 1.7e9
	tmpl := filepath.Join(dir, "template", "tasks.sqlite")
	if !platformtest.CreatesParents {
		os.Mkdir(filepath.Dir(tmpl), 0o700)
	}
	opts := ledger.Options{AllowExternalACL: platformtest.Windows, Clock: func() time.Time { return time.Unix(int64(now), 0) }}
	l, err := ledger.Open(tmpl, opts)
	if err == nil {
		err = l.Close()
	}
	if err == nil {
		err = benchseed.LedgerRows(tmpl, 20000, now)
	}
	if err != nil {
		t.Fatal(err)
	}
	if l, err = ledger.Open(tmpl, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reconcile(ledger.ReconcileOptions{ActiveGrace: new(time.Duration(0)), DeliveryGrace: new(time.Duration(0))}); err != nil {
		t.Fatal(err)
	}
	var trees [][]string
	for range 20 {
		var tree []string
		for i := range 3 {
			p := ledger.CreateParams{Internal: true}
			if i > 0 {
				p.ParentID = tree[0]
			}
			task, err := l.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			tree = append(tree, task.ID)
		}
		for _, id := range tree {
			if _, err := l.CloseTask(id, ledger.StatusSucceeded, ledger.NoCode); err != nil {
				t.Fatal(err)
			}
			if _, err := l.SetDelivery(id, ledger.DeliveryNotApplicable, ledger.NoCode); err != nil {
				t.Fatal(err)
			}
		}
		trees = append(trees, tree)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	seed, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	cutoff := strconv.FormatFloat(now+1, 'f', -1, 64)
	midway := 0
	for k := 0; k < kills; k++ {
		db := filepath.Join(dir, "run"+strconv.Itoa(k), "tasks.sqlite")
		if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(db, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		plan := []journal.Step{{Argv: append([]string{bin}, platformtest.ACLArgs("--db", db, "prune", "--ended-before", cutoff)...)}}
		// The prune takes about half a second of CPU here; kill within
		// the first second, often inside it.
		delay := time.Duration(50+k*900/max(1, kills)) * time.Millisecond
		if _, err := journal.RunAndKill(planrun, filepath.Dir(db), plan, delay); err != nil {
			t.Fatal(err)
		}
		out, rc := runLedger(t, bin, "--db", db, "doctor")
		var report struct {
			Healthy     bool
			OrphanCount int `json:"orphan_count"`
			TaskCount   int `json:"task_count"`
		}
		json.Unmarshal([]byte(out), &report)
		if rc != 0 || !report.Healthy || report.OrphanCount != 0 {
			t.Fatalf("kill %d after %v: read-only doctor %s (exit %d)", k, delay, out, rc)
		}
		r, err := ledger.Open(db, ledger.Options{AllowExternalACL: platformtest.Windows, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, tree := range trees {
			left := 0
			for _, id := range tree {
				_, err := r.Get(id)
				switch {
				case err == nil:
					left++
				case !errors.Is(err, ledger.ErrTaskNotFound):
					t.Fatal(err)
				}
			}
			if left != 0 && left != 3 {
				t.Fatalf("kill %d: tree %d holds %d of its 3 tasks", k, i, left)
			}
		}
		r.Close()
		if report.TaskCount < 20060 && report.TaskCount > 6000 {
			midway++
		}
		out, rc = runLedger(t, bin, "--db", db, "prune", "--ended-before", cutoff)
		if rc != 0 {
			t.Fatalf("kill %d: prune after the kill: %s (exit %d)", k, out, rc)
		}
		out, rc = runLedger(t, bin, "--db", db, "doctor")
		json.Unmarshal([]byte(out), &report)
		if rc != 0 || report.TaskCount != 6000 {
			t.Fatalf("kill %d: after the second prune: %s (exit %d)", k, out, rc)
		}
	}
	t.Logf("%d kills, %d of them between batches of the prune (some trees removed, not all)", kills, midway)
}
