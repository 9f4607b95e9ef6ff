//go:build linux || darwin

package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWritableDirectoryRefused: the database's own directory must not be
// writable by group or others (spec 11.1), each bit on its own and a
// sticky world-writable one (/tmp itself) too: a writable open, a
// read-only one and a first creation all answer InvalidInput "database
// directory is group- or world-writable", and nothing in the directory
// changes. An owner-only directory with every other bit but the write
// bits (0755) is accepted. Planted bug: the check narrowed to one of the
// two bits (the other test's 0770 sets both).
func TestWritableDirectoryRefused(t *testing.T) {
	const reason = "database directory is group- or world-writable"
	for _, perm := range []os.FileMode{0o720, 0o702, 0o722, 0o777 | os.ModeSticky} {
		t.Run(fmt.Sprintf("%o", perm), func(t *testing.T) {
			dir := privateDir(t)
			existing := newLedgerFile(t, dir)
			if err := os.Chmod(dir, perm); err != nil {
				t.Fatal(err)
			}
			before := snapshotDir(t, dir)
			for _, c := range []struct {
				what string
				path string
				opts Options
			}{
				{"writable open", existing, Options{AllowExternalACL: onWindows}},
				{"read-only open", existing, Options{AllowExternalACL: onWindows, ReadOnly: true}},
				{"first creation", filepath.Join(dir, "new.sqlite"), Options{AllowExternalACL: onWindows}},
			} {
				l, err := Open(c.path, c.opts)
				if err == nil {
					l.Close()
				}
				if !errors.Is(err, ErrInvalidInput) || Reason(err) != reason {
					t.Errorf("%s in a %o directory: %v, want InvalidInput (%s)", c.what, perm, err, reason)
				}
			}
			if !sameSnapshot(before, snapshotDir(t, dir)) {
				t.Error("a refused open changed the directory")
			}
		})
	}
	dir := privateDir(t)
	p := newLedgerFile(t, dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatalf("0755 directory: %v", err)
	}
	l.Close()
}
