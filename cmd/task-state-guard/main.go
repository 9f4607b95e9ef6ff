// Command task-state-guard is the CLI of the SQLite task and delivery
// ledger; see internal/ledgercli for its behaviour.
package main

import (
	"os"

	"github.com/stateguard/stateguard/internal/ledgercli"
)

func main() {
	os.Exit(ledgercli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
