package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Backup syncs the target's directory after the copy was renamed into
// place, and only then answers: the sync runs once, on that directory,
// when the target holds the copy and the partial name is gone; a failed
// sync is InternalError "sync backup directory failed" (the copy stays,
// complete, at its name).
func TestBackupSyncsTheDirectoryAfterTheRename(t *testing.T) {
	l, _, _ := openTest(t)
	if _, err := l.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	dir := privateDir(t)
	target := filepath.Join(dir, "copy.sqlite")
	var synced []string
	failSync := false
	hooks.syncBackupDir = func(d string) error {
		synced = append(synced, d)
		if _, err := os.Lstat(target); err != nil {
			t.Errorf("directory synced before the copy was at its name: %v", err)
		}
		if _, err := os.Lstat(target + PartialSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("directory synced while the partial copy still has its name: %v", err)
		}
		if failSync {
			return errors.New("sync failed")
		}
		return nil
	}
	t.Cleanup(func() { hooks.syncBackupDir = nil })
	if _, err := l.Backup(target); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || !sameDir(t, synced[0], dir) {
		t.Fatalf("directories synced: %v, want once %s", synced, dir)
	}
	failSync, synced = true, nil
	second := filepath.Join(dir, "second.sqlite")
	target = second
	_, err := l.Backup(second)
	if Reason(err) != "sync backup directory failed" || len(synced) != 1 {
		t.Fatalf("failed sync: %v (%d syncs), want InternalError sync backup directory failed", err, len(synced))
	}
}

// sameDir reports whether a and b name the same directory.
func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	ia, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(ia, ib)
}
