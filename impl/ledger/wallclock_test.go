package ledger

import (
	"path/filepath"
	"testing"
	"time"
)

// TestWallClockByDefault: without Options.Clock a ledger stamps the wall
// clock's time in seconds since the epoch.
func TestWallClockByDefault(t *testing.T) {
	l, err := Open(filepath.Join(privateDir(t), "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	before := time.Now().Add(-time.Second)
	task, err := l.Create(CreateParams{})
	after := time.Now().Add(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if task.CreatedAt.Before(before) || task.CreatedAt.After(after) {
		t.Fatalf("created_at %v, want between %v and %v", task.CreatedAt, before, after)
	}
}
