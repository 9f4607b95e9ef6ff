package sweep_test

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stateguard/stateguard/impl/sweepstate/cli"
)

var update = flag.Bool("update", false, "rewrite the second argument of failing cmp commands")

// fixedClock is the wall clock the scripts see when a command has no --now:
// SWEEP_TEST_NOW (RFC 3339) when set, so output stays deterministic.
func fixedClock() {
	if v := os.Getenv("SWEEP_TEST_NOW"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err == nil {
			cli.Clock = func() time.Time { return t }
		}
	}
}

func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{
		"sweep-state": func() int {
			fixedClock()
			return cli.Main(os.Args[1:], os.Stdout, os.Stderr)
		},
	}))
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
	})
}
