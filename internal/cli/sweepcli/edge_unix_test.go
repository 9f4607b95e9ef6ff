//go:build unix

package sweepcli_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runCLIWithin is runCLI that fails instead of hanging: a FIFO opened for
// reading blocks until a writer comes, which must never happen.
func runCLIWithin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		rc             int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		rc, stdout, stderr := runCLI(t, args...)
		done <- result{rc, stdout, stderr}
	}()
	select {
	case r := <-done:
		return r.rc, r.stdout, r.stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("%q did not return: blocked on a FIFO?", args)
		return 0, "", ""
	}
}

// TestSpecialFilesAreNotRead: a FIFO or a device at the state path is
// CORRUPT, and as --file imports nothing; neither blocks or reads forever
// while the lock is held.
func TestSpecialFilesAreNotRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, special := range []string{fifo, os.DevNull} {
		for _, args := range [][]string{
			{"read", "--state", special},
			{"lease-acquire", "--state", special, "--writer", "w1", "--now", "2026-07-02T12:00:00Z"},
		} {
			if rc, stdout, _ := runCLIWithin(t, args...); rc != 0 || stdout != "CORRUPT\n" {
				t.Errorf("%q: exit %d stdout %q, want CORRUPT", args, rc, stdout)
			}
		}
	}
	const nothing = "OK\n{\"cursors_imported\": 0, \"items_imported\": 0}\n"
	for _, legacy := range []string{fifo, "/dev/zero", dir} {
		state := filepath.Join(t.TempDir(), "state.yml")
		if rc, stdout, _ := runCLIWithin(t, "import-legacy", "--state", state, "--file", legacy); rc != 0 || stdout != nothing {
			t.Errorf("--file %s: exit %d stdout %q, want %q", legacy, rc, stdout, nothing)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}

// TestSymlinkedStateFileIsFollowed: as in the reference engine, a state
// path that is a symbolic link to the user's own file is read through it.
func TestSymlinkedStateFileIsFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.yml")
	if err := os.WriteFile(target, []byte("schema_version: 1\nitems: {}\nsources: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "state.yml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	want := "OK\n{\"schema_version\": 1, \"items\": {}, \"sources\": {}}\n"
	if rc, stdout, _ := runCLI(t, "read", "--state", link); rc != 0 || stdout != want {
		t.Errorf("read through a link: exit %d stdout %q, want %q", rc, stdout, want)
	}
}
