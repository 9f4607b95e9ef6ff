//go:build windows

package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWindowsPathsWithoutTheirDriveOrRoot: Windows reads a path rooted
// without a drive ("\dir\tasks.sqlite") on the current directory's drive,
// and a drive-relative one ("C:tasks.sqlite") against that drive's current
// directory (spec/task-state-guard.md 11.1, the parent is canonicalised as
// the platform reads it): each opens the ledger where Windows reads it. Before, both were joined to the
// current directory ("C:\cwd\\dir\tasks.sqlite") and refused as a missing
// directory (under Wine a fuzz target's "\dev\shm\..." was). Broken on
// purpose by making fromWorkingDir join every relative path to the
// current directory: both subtests fail with "database directory does not
// exist".
func TestWindowsPathsWithoutTheirDriveOrRoot(t *testing.T) {
	dir := privateDir(t)
	vol := filepath.VolumeName(dir)
	if len(vol) != 2 || vol[1] != ':' {
		t.Fatalf("temporary folder %q is not on a drive letter", dir)
	}
	elsewhere := privateDir(t)
	open := func(t *testing.T, path, name string) {
		t.Helper()
		l, err := Open(path, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
		if err != nil {
			t.Fatalf("open %q: %v", path, err)
		}
		if _, err := l.Create(CreateParams{}); err != nil {
			t.Fatal(err)
		}
		l.Close()
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("open %q made no ledger in %s: %v", path, dir, err)
		}
		if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
			t.Fatalf("open %q left %d entries in %s", path, len(left), elsewhere)
		}
	}
	t.Run("rooted without a drive", func(t *testing.T) {
		t.Chdir(elsewhere)
		open(t, strings.TrimPrefix(dir, vol)+`\rooted.sqlite`, "rooted.sqlite")
	})
	t.Run("drive-relative", func(t *testing.T) {
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		open(t, vol+`sub\relative.sqlite`, `sub\relative.sqlite`)
	})
}
