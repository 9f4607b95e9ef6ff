//go:build windows

package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

const (
	sharedTaskA = "00000000-0000-4000-8000-0000000000a1"
	sharedTaskB = "00000000-0000-4000-8000-0000000000b2"
)

// walLeftBehind lays out, in a fresh directory, a ledger as a killed writer
// leaves it: task A checkpointed into the file, task B only in the -wal,
// and no connection holding either file.
func walLeftBehind(t *testing.T) string {
	t.Helper()
	src := filepath.Join(privateDir(t), "live.sqlite")
	w, err := Open(src, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Create(CreateParams{TaskID: sharedTaskA}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, err = Open(src, Options{AllowExternalACL: onWindows, Clock: fixedClock(1001)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Create(CreateParams{TaskID: sharedTaskB}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(privateDir(t), "copy.sqlite")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// holdForDeletion opens path as DeleteFile does, with delete access and
// every sharing, and returns the handle's close.
func holdForDeletion(t *testing.T, path string, access uint32) func() {
	t.Helper()
	return holdOpen(t, path, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, windows.FILE_FLAG_OPEN_REPARSE_POINT)
}

// holdOpen opens path with the access, sharing and flags given, and returns
// the handle's close (also run at the test's end).
func holdOpen(t *testing.T, path string, access, share, flags uint32) func() {
	t.Helper()
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(name, access, share, nil, windows.OPEN_EXISTING, flags, 0)
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

// TestWindowsReadBesideASidecarBeingDeleted: a closing writer's SQLite
// deletes its -wal with DeleteFile, which holds the file with delete
// access for a moment; an open that does not share deletion (Go's, the
// view's) is refused with a sharing violation then. That is the files
// changing under a read (spec 12.4): the read is retried, and succeeds
// once the deletion's handle is gone; held on every attempt, it answers
// StateConflict after the retries. Before the fix the view answered
// InvalidInput "sidecar cannot be opened safely" at once (about one
// TestDryRunBesideWriters run in five under Wine on a loaded machine).
// Broken on purpose by dropping errInUse from storageguard.View.load's retryable
// cases: both subtests fail with that InvalidInput.
func TestWindowsReadBesideASidecarBeingDeleted(t *testing.T) {
	t.Run("released during the retries", func(t *testing.T) {
		p := walLeftBehind(t)
		release := holdForDeletion(t, p+"-wal", windows.DELETE)
		pauses := 0
		hooks.readOnlyPause = func(time.Duration) { pauses++; release() }
		t.Cleanup(func() { hooks.readOnlyPause = time.Sleep })
		l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only open beside a deletion: %v", err)
		}
		defer l.Close()
		if pauses == 0 {
			t.Fatal("the open never met the deletion's handle: the test tests nothing")
		}
		for _, id := range []string{sharedTaskA, sharedTaskB} {
			if _, err := l.Get(id); err != nil {
				t.Fatalf("get %s: %v", id, err)
			}
		}
	})
	t.Run("held on every attempt", func(t *testing.T) {
		p := walLeftBehind(t)
		holdForDeletion(t, p+"-wal", windows.DELETE)
		pauses := 0
		hooks.readOnlyPause = func(time.Duration) { pauses++ }
		t.Cleanup(func() { hooks.readOnlyPause = time.Sleep })
		_, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
		if !errors.Is(err, ErrStateConflict) || !errors.Is(err, storageguard.ErrSourceChanged) {
			t.Fatalf("got %v, want StateConflict %q", err, Reason(storageguard.ErrSourceChanged))
		}
		if pauses != len(readOnlyPauses) {
			t.Fatalf("%d pauses, want %d", pauses, len(readOnlyPauses))
		}
	})
}
