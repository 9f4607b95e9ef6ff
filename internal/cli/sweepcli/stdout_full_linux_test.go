package sweepcli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDevFullExitsOne runs the real binary with stdout on /dev/full, the
// case a user met: exit 1, one stderr line, and the lease taken.
func TestDevFullExitsOne(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	defer full.Close()
	state := filepath.Join(t.TempDir(), "state.yml")
	cmd := exec.Command(binPath, "lease-acquire", "--state", state, "--writer", "w", "--now", "2026-07-02T12:00:00Z")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (stderr %q)", err, stderr.String())
	}
	if stderr.String() != "sweep-state: error: the answer could not be written to stdout\n" {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("the lease was not taken: %v", err)
	}
}
