package durable

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestReplaceWhileAReaderHoldsTheFile: read and cursor-get take no lock
// and rely on the atomic rename (spec/sweep-state.md 13.1, 13.4), so a
// write must replace the state file that a reader holds open, and the
// reader goes on reading the old text. Where the rename is refused while
// the file is open (Windows; Wine refuses it whatever the sharing), the
// write waits for the reader instead of failing: the test closes its
// reader once it has seen a refused rename, and the write must then
// succeed. Found by TestLinearizableSweep under Wine (a write beside a
// read answered ERROR). Broken on purpose by returning renameOver's first
// error: the write fails on Windows.
func TestReplaceWhileAReaderHoldsTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yml")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, err := OpenRegular(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	refused := make(chan struct{})
	var once sync.Once
	o := DefaultOps()
	o.Rename = func(oldpath, newpath string) error {
		err := os.Rename(oldpath, newpath)
		if err != nil {
			once.Do(func() { close(refused) })
		}
		return err
	}
	defer SetOps(o)()
	done := make(chan error, 1)
	go func() {
		done <- WriteFileFunc(p, func(w io.Writer) error {
			_, err := io.WriteString(w, "new\n")
			return err
		})
	}()
	readHeld := func() {
		if held, err := io.ReadAll(f); err != nil || string(held) != "old\n" {
			t.Errorf("the reader's open file reads %q %v, want the old text", held, err)
		}
	}
	select {
	case <-refused: // the open reader holds the rename off
		readHeld()
		f.Close()
		err = <-done
	case err = <-done: // replaced at once
		readHeld()
	}
	if err != nil {
		t.Fatalf("replacing the file a reader holds: %v", err)
	}
	if now, err := os.ReadFile(p); err != nil || string(now) != "new\n" {
		t.Fatalf("the path reads %q %v, want the new text", now, err)
	}
}
