package sweepcli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	binPath = filepath.Join(dir, "sweep-state")
	build := exec.Command("go", "build", "-o", binPath, "github.com/stateguard/stateguard/cmd/sweep-state")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sweep-state:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
