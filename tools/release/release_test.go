package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// A stamped host binary reports the stamped version, not the fallback.
// sweep-state is used because it builds in seconds (no SQLite).
func TestStampedBinaryReportsVersion(t *testing.T) {
	platformtest.GoCommand(t)
	if testing.Short() {
		t.Skip("builds a binary")
	}
	out := t.TempDir()
	const version = "9.8.7-test"
	name, err := build("sweep-state", target{runtime.GOOS, runtime.GOARCH}, version, out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(filepath.Join(out, name), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "sweep-state " + version + "\n"; string(got) != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}

	if err := writeSums(out, []string{name}); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]) + "  " + name + "\n"; string(sums) != want {
		t.Fatalf("SHA256SUMS = %q, want %q", sums, want)
	}
}

func TestReleaseRefusesABadVersion(t *testing.T) {
	var log bytes.Buffer
	for _, v := range []string{"", "v0.1.0", "0.1", "0.1.0 -X x=y"} {
		if err := release(options{version: v, out: t.TempDir()}, &log); err == nil || !strings.Contains(err.Error(), "X.Y.Z") {
			t.Errorf("release(%q) = %v, want a version error", v, err)
		}
	}
}
