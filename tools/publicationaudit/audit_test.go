package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every planted canary is found, the clean subjects pass, and no report
// holds a canary: the checks fail closed without echoing what they found.
func TestSelfTest(t *testing.T) {
	var out bytes.Buffer
	if status := selfTest(&out); status != 0 {
		t.Fatalf("self-test exit %d:\n%s", status, out.String())
	}
	t.Log(out.String())
}

// The project's own tree passes its audit.
func TestTreeIsClean(t *testing.T) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Skipf("no go command to find the module root: %v", err)
	}
	var out bytes.Buffer
	if status := run([]string{filepath.Dir(strings.TrimSpace(string(root)))}, &out, &out); status != 0 {
		t.Fatalf("audit of the tree: exit %d\n%s", status, out.String())
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if status := run([]string{filepath.Join(t.TempDir(), "missing")}, &out, &out); status != 2 {
		t.Errorf("a missing subject: exit %d, want 2", status)
	}
	if status := run([]string{"-bogus"}, &out, &out); status != 2 {
		t.Errorf("an unknown flag: exit %d, want 2", status)
	}
}
