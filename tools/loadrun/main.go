// Command loadrun puts both engines under load: N processes at a time, each
// worker running one CLI call after another (a mix of every subcommand) for
// a fixed time against one shared state file or ledger. It prints calls
// per second, latency percentiles and the answers by class, and then
// checks with the executable models (model/sweep, model/ledger) that
// nothing a call answered OK for was lost. The load itself is
// tools/internal/cliload, which tools/ledgerengines also runs.
//
//	go run ./tools/loadrun                          # 16 processes, 10 s per engine
//	go run ./tools/loadrun -procs 32 -duration 1m -engine ledger
//
// It exits 1 when an update was lost, when the sweep engine answered ERROR
// or CORRUPT, or when the ledger answered InternalError (SQLite contention
// must surface as waiting, never as an internal error).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/stateguard/stateguard/tools/internal/cliload"
)

func main() {
	procs := flag.Int("procs", 16, "concurrent processes per engine")
	duration := flag.Duration("duration", 10*time.Second, "load time per engine")
	engine := flag.String("engine", "both", "sweep, ledger or both")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "loadrun-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	failed := false
	for _, e := range []string{"sweep", "ledger"} {
		if *engine != "both" && *engine != e {
			continue
		}
		bin, err := build(tmp, e)
		if err != nil {
			fail(err)
		}
		dir := filepath.Join(tmp, e+"-data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			fail(err)
		}
		cfg := cliload.Config{Bin: bin, Dir: dir, Procs: *procs, Duration: *duration}
		var rep cliload.Report
		if e == "sweep" {
			rep, err = cliload.RunSweep(cfg)
		} else {
			rep, err = cliload.RunLedger(cfg)
		}
		if err != nil {
			fail(err)
		}
		fmt.Print(rep)
		if !rep.OK() {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// build compiles the engine's command into dir.
func build(dir, engine string) (string, error) {
	pkg := map[string]string{"sweep": "sweep-state", "ledger": "task-state-guard"}[engine]
	bin := filepath.Join(dir, pkg)
	out, err := exec.Command("go", "build", "-o", bin, "github.com/stateguard/stateguard/cmd/"+pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadrun:", err)
	os.Exit(2)
}
