// Command task-state-guard is the command line of the SQLite task and
// delivery ledger: one JSON line per call. Its contract is
// spec/task-state-guard.md; the README's cheat sheet lists the commands. To
// use the ledger from Go, import github.com/stateguard/stateguard/impl/ledger,
// which this command runs (the argument parsing lives in internal/cli/ledgercli
// and is not importable).
package main

import (
	"os"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
)

func main() {
	os.Exit(ledgercli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
