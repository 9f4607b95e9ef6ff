//go:build windows

package storageguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// holdWithoutDeleteSharing opens path as a virus scanner or an indexer
// does, sharing read and write but not deletion, and returns the close.
func holdWithoutDeleteSharing(t *testing.T, path string) func() {
	t.Helper()
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	release := func() {
		if !closed {
			closed = true
			windows.CloseHandle(h)
		}
	}
	t.Cleanup(release)
	return release
}

// TestWindowsBackupMoveWaitsForAHolder: a scanner that opens the finished
// backup's .partial before it is moved into place (Windows Defender
// opens every new file) makes MoveFileEx fail with a sharing violation.
// The move is retried, as the sweep's rename is, until the holder lets go
// or renameHeldWait has passed; a target that exists is refused at once.
// Broken on purpose by returning the first refusal: "released" fails.
func TestWindowsBackupMoveWaitsForAHolder(t *testing.T) {
	layout := func(t *testing.T) (from, to string) {
		d := t.TempDir()
		from, to = filepath.Join(d, "copy.sqlite.partial"), filepath.Join(d, "copy.sqlite")
		if err := os.WriteFile(from, []byte("backup bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
		return from, to
	}
	seams := func(t *testing.T, wait time.Duration, refused func()) {
		prevWait, prevRefused := renameHeldWait, renameHeldRefused
		renameHeldWait, renameHeldRefused = wait, refused
		t.Cleanup(func() { renameHeldWait, renameHeldRefused = prevWait, prevRefused })
	}

	t.Run("released", func(t *testing.T) {
		from, to := layout(t)
		release := holdWithoutDeleteSharing(t, from)
		refusals := 0
		seams(t, 5*time.Second, func() { refusals++; release() })
		if err := RenameNoReplace(from, to); err != nil {
			t.Fatalf("move after the holder let go: %v", err)
		}
		if refusals == 0 {
			t.Fatal("the held move was never refused: the test shows nothing")
		}
		if b, err := os.ReadFile(to); err != nil || string(b) != "backup bytes" {
			t.Fatalf("target = %q, %v", b, err)
		}
		if _, err := os.Lstat(from); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf(".partial still there: %v", err)
		}
	})

	t.Run("held throughout", func(t *testing.T) {
		from, to := layout(t)
		holdWithoutDeleteSharing(t, from)
		refusals := 0
		seams(t, 50*time.Millisecond, func() { refusals++ })
		err := RenameNoReplace(from, to)
		if err == nil || errors.Is(err, fs.ErrExist) {
			t.Fatalf("move while held throughout = %v, want the sharing refusal", err)
		}
		if refusals < 2 {
			t.Fatalf("%d refusals: the move was not retried", refusals)
		}
		if _, err := os.Lstat(to); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("target appeared: %v", err)
		}
	})

	t.Run("target exists", func(t *testing.T) {
		from, to := layout(t)
		if err := os.WriteFile(to, []byte("older"), 0o600); err != nil {
			t.Fatal(err)
		}
		refusals := 0
		seams(t, 5*time.Second, func() { refusals++ })
		if err := RenameNoReplace(from, to); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("move onto an existing target = %v, want fs.ErrExist", err)
		}
		if refusals != 0 {
			t.Fatalf("an existing target was retried %d times", refusals)
		}
	})
}
