// Command task-state-guard is the CLI of the SQLite task and delivery
// ledger; see impl/ledger/cli for its behaviour.
package main

import (
	"os"

	"github.com/stateguard/stateguard/impl/ledger/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
