package sweepcli_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// binPath is the sweep-state binary built once for the tests that run real
// processes (fixture replay, concurrency, benchmarks).
var binPath string

func TestMain(m *testing.M) {
	if spec := os.Getenv(benchStateEnv); spec != "" {
		if err := writeBenchState(spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "sweep-state-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath, err = platformtest.CommandBinary(dir, "sweep-state")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
