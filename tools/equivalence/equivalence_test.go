package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// plantedEnv makes the test binary a sweep-state with a planted bug: it
// runs the real binary named by the variable, except that validate never
// downgrades anything (it answers as if the file were in order and writes
// nothing).
const plantedEnv = "EQUIVALENCE_TEST_PLANTED_SWEEP"

func TestMain(m *testing.M) {
	if real := os.Getenv(plantedEnv); real != "" {
		os.Exit(plantedSweep(real, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func plantedSweep(real string, args []string) int {
	if len(args) > 0 && args[0] == "validate" {
		fmt.Print("OK\n{\"downgraded\": []}\n")
		return 0
	}
	cmd := exec.Command(real, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		return 125
	}
	return 0
}

func sweepBinary(t *testing.T) string {
	t.Helper()
	platformtest.GoCommand(t)
	bin, err := platformtest.CommandBinary(t.TempDir(), "sweep-state")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// The binary against itself: every sequence equivalent, exit 0.
func TestSweepAgainstItself(t *testing.T) {
	bin := sweepBinary(t)
	var out, errs bytes.Buffer
	status := run([]string{"-sweep-old", bin, "-sweep-new", bin, "-sequences", "8", "-seed", "3"}, &out, &errs)
	want := "8/8 sequences equivalent; 0 differences outside the declared divergences\n"
	if status != 0 || out.String() != want {
		t.Fatalf("exit %d, stdout %q (stderr %q), want 0 and %q", status, out.String(), errs.String(), want)
	}
}

// A validate that never downgrades is found and reported with a shortened
// reproduction ending in validate.
func TestSweepFindsAPlantedBug(t *testing.T) {
	bin := sweepBinary(t)
	t.Setenv(plantedEnv, bin)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	status := run([]string{"-sweep-old", bin, "-sweep-new", self, "-sequences", "8", "-seed", "3"}, &out, &errs)
	text := out.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	last := lines[len(lines)-1]
	if status != 1 || strings.Contains(last, " 0 differences") || !strings.HasSuffix(last, "differences outside the declared divergences") {
		t.Fatalf("exit %d, report:\n%s\nstderr: %s", status, text, errs.String())
	}
	for i, line := range lines {
		if strings.HasPrefix(line, "sequence ") {
			// The reproduction's last call is the planted one.
			j := i + 1
			for j+1 < len(lines) && strings.HasPrefix(lines[j+1], "  PROGRAM ") {
				j++
			}
			if !strings.HasPrefix(lines[j], "  PROGRAM validate ") {
				t.Errorf("a reproduction does not end in validate:\n%s", strings.Join(lines[i:j+1], "\n"))
			}
		}
	}
	t.Log(text)
}
