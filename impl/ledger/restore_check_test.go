package ledger

import (
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestRestoreChecksThePagesOnce: a restore has SQLite check the copy's
// pages once, and the doctor that judges the copy's rows uses that check:
// quick_check reads every page of the file, the largest part of a
// restore's cost after the copy itself.
func TestRestoreChecksThePagesOnce(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "backup.db")
	ledgerOfTasks(t, from, 3)
	var checks atomic.Int32
	hooks.doctorQueryFault = func(q string) error {
		if q == quickCheckSQL {
			checks.Add(1)
		}
		return nil
	}
	t.Cleanup(func() { hooks.doctorQueryFault = nil })
	for _, target := range []string{"missing.db", "existing.db"} {
		p := filepath.Join(dir, target)
		if target == "existing.db" {
			ledgerOfTasks(t, p, 1)
		}
		checks.Store(0)
		rep, err := Restore(p, from, restoreOpts)
		if err != nil || rep.TaskCount != 3 {
			t.Fatalf("restore onto %s: %+v, %v", target, rep, err)
		}
		if n := checks.Load(); n != 1 {
			t.Errorf("restore onto %s ran quick_check %d times, want 1", target, n)
		}
	}
}

// ledgerOfTasks makes the ledger at p with n tasks, closed again.
func ledgerOfTasks(t *testing.T, p string, n int) {
	t.Helper()
	l, err := Open(p, restoreOpts)
	if err != nil {
		t.Fatal(err)
	}
	createTasks(t, l, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
