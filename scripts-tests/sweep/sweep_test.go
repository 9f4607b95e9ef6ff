package sweep_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/internal/testsupport/scriptindex"
)

var update = flag.Bool("update", false, "rewrite the second argument of failing cmp commands")

// fixedClock is the wall clock the scripts see when a command has no --now:
// SWEEP_TEST_NOW (RFC 3339) when set, so output stays deterministic.
func fixedClock() {
	if v := os.Getenv("SWEEP_TEST_NOW"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err == nil {
			sweepcli.Clock = func() time.Time { return t }
		}
	}
}

func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{
		"sweep-state": func() int {
			fixedClock()
			return sweepcli.Main(os.Args[1:], os.Stdout, os.Stderr)
		},
	}))
}

// TestScriptsRunProgramsThroughExits: no script runs a program with exec,
// which cannot try a start again that Wine refused (see exits).
func TestScriptsRunProgramsThroughExits(t *testing.T) {
	platformtest.NoScriptExec(t, "testdata")
}

// TestScriptsAreIndexed: scripts-tests/README.md lists every script by
// topic, and only scripts that exist, so a reader can find the one to copy.
func TestScriptsAreIndexed(t *testing.T) {
	scriptindex.Check(t, filepath.Join("..", "README.md"), "testdata")
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Condition: func(cond string) (bool, error) {
			if holds, ok := platformtest.ScriptCondition(cond); ok {
				return holds, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": exits},
	})
}

// exits implements `exits N PROGRAM ARGS...`: it runs the program like
// exec and requires exit status N. testscript's own `! exec` accepts any
// failure, which would not tell misuse (2) from a crash. The scripts run
// every program through it (`exits 0` for a success), because it tries a
// start again that Wine refused, which exec cannot (no script gives a
// program stdin, which a retry would lose: ts.Exec clears it).
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad status %q", args[0])
	}
	got := 0
	if err := platformtest.RetryWineStart(ts, func() error { return ts.Exec(args[1], args[2:]...) }); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			ts.Fatalf("exits: %v", err)
		}
		got = exitErr.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}
