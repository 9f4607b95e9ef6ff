package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/tools/internal/cliload"
)

// TestShortLoad is the short variant of loadrun: 16 processes for two
// seconds per engine. No call may answer ERROR/CORRUPT (sweep) or
// InternalError (ledger), and the model must find nothing lost.
// STATEGUARD_LOAD_DURATION (a Go duration) runs longer.
func TestShortLoad(t *testing.T) {
	platformtest.GoCommand(t)
	d := 2 * time.Second
	if s := os.Getenv("STATEGUARD_LOAD_DURATION"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, engine := range []string{"sweep", "ledger"} {
		t.Run(engine, func(t *testing.T) {
			tmp := t.TempDir()
			bin, err := build(tmp, engine)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := cliload.Config{Bin: bin, Dir: dir, Procs: 16, Duration: d}
			run := cliload.RunSweep
			if engine == "ledger" {
				run = cliload.RunLedger
			}
			rep, err := run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(rep.String())
			if len(rep.Latencies) < 16 {
				t.Errorf("only %d calls: no load", len(rep.Latencies))
			}
			if !rep.OK() {
				t.Fatal(rep.String())
			}
		})
	}
}
