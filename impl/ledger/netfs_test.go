//go:build linux || darwin

package ledger

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// presentFS makes every statfs of this package answer st until the test
// ends.
func presentFS(t *testing.T, st storageguard.FSStat) {
	t.Helper()
	storageguard.Hooks.Statfs = func(string) (storageguard.FSStat, error) { return st, nil }
	t.Cleanup(func() { storageguard.Hooks.Statfs = nil })
}

// TestNetworkFileSystemRefused: a ledger whose directory statfs places on
// a network file system is refused, writable or read-only, existing or
// not, with a fixed reason, and nothing is made or changed (not even the
// missing directories a writable open would create); a local file system,
// FUSE among them, opens.
func TestNetworkFileSystemRefused(t *testing.T) {
	for name, st := range networkFileSystems {
		t.Run(name, func(t *testing.T) {
			dir := privateDir(t)
			db := newLedgerFile(t, dir)
			before := snapshotDir(t, dir)
			presentFS(t, st)
			for _, target := range []string{db, filepath.Join(dir, "new.sqlite"), filepath.Join(dir, "a", "b", "new.sqlite")} {
				for _, ro := range []bool{false, true} {
					if ro && target != db {
						continue // a read-only open of a missing ledger is refused for that first
					}
					l, err := Open(target, Options{ReadOnly: ro})
					if err == nil {
						l.Close()
						t.Fatalf("%s, read-only=%v: opened", filepath.Base(target), ro)
					}
					if !errors.Is(err, ErrInvalidInput) || Reason(err) != "database directory is on a network file system" {
						t.Fatalf("%s, read-only=%v: %v (reason %q)", filepath.Base(target), ro, err, Reason(err))
					}
				}
			}
			if !sameSnapshot(before, snapshotDir(t, dir)) {
				t.Error("a refused open changed the directory")
			}
		})
	}
	for name, st := range localFileSystems {
		t.Run(name, func(t *testing.T) {
			dir := privateDir(t)
			db := newLedgerFile(t, dir)
			presentFS(t, st)
			for _, ro := range []bool{false, true} {
				l, err := Open(db, Options{ReadOnly: ro})
				if err != nil {
					t.Fatalf("read-only=%v: %v", ro, err)
				}
				l.Close()
			}
		})
	}
}

// TestStatfsFailureRefused: a directory whose file system cannot be read
// is not taken as local.
func TestStatfsFailureRefused(t *testing.T) {
	dir := privateDir(t)
	db := newLedgerFile(t, dir)
	storageguard.Hooks.Statfs = func(string) (storageguard.FSStat, error) {
		return storageguard.FSStat{}, errors.New("planted statfs failure")
	}
	defer func() { storageguard.Hooks.Statfs = nil }()
	if l, err := Open(db, Options{ReadOnly: true}); err == nil {
		l.Close()
		t.Fatal("opened without knowing its file system")
	}
}
