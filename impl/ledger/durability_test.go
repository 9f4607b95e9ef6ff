package ledger

import (
	"path/filepath"
	"testing"
)

// TestWritableSynchronousFull (divergence L6): a writable connection syncs
// the -wal at every commit, so a command that answered ok survives a power
// loss, not only a crash of the process.
func TestWritableSynchronousFull(t *testing.T) {
	l, err := Open(filepath.Join(privateDir(t), "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, err := l.pragmaInt("PRAGMA synchronous"); err != nil || got != 2 {
		t.Fatalf("synchronous = %d (%v), want 2 (FULL)", got, err)
	}
}
