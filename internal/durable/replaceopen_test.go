package durable

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceWhileAReaderHoldsTheFile: read and cursor-get take no lock
// and rely on the atomic rename (spec/sweep-state.md 13.1, 13.4), so a
// write must replace the state file while a reader still has it open, and
// the reader must go on reading the old text. On Windows a plain os.Open
// does not share delete access, and the rename failed ("cannot write the
// state file" beside a concurrent read, found by TestLinearizableSweep
// under Wine). Broken on purpose by opening with os.Open in
// openNonblocking: the write fails on Windows.
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
	if err := WriteFileFunc(p, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatalf("replacing the file a reader holds: %v", err)
	}
	held, err := io.ReadAll(f)
	if err != nil || string(held) != "old\n" {
		t.Fatalf("the reader's open file reads %q %v, want the old text", held, err)
	}
	now, err := os.ReadFile(p)
	if err != nil || string(now) != "new\n" {
		t.Fatalf("the path reads %q %v, want the new text", now, err)
	}
}
