package sweepengine

import (
	"os"
	"runtime"
	"testing"
)

// TestCheckKeptSeesMode: a refusal that only tightens the hand-edited
// file's mode to 0600 (bytes and mtime kept) must fail FuzzStateFile's
// "mode kept" oracle. The file was written 0600 itself, the mode every
// write leaves, so such a chmod was invisible.
func TestCheckKeptSeesMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	file := []byte("schema_version: 1\nthis line has no colon\n")
	state := handEdited(t, t.TempDir(), file)
	if err := checkKept(state, file); err != nil {
		t.Fatalf("untouched file: %v", err)
	}
	if err := os.Chmod(state, 0o600); err != nil {
		t.Fatal(err)
	}
	if checkKept(state, file) == nil {
		t.Fatal("a file whose mode was changed to 0600 passed as kept")
	}
}
