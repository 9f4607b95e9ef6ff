// Command sweep-state is the sweep state engine's command line; see package
// github.com/stateguard/stateguard/impl/sweepstate/cli.
package main

import (
	"os"

	"github.com/stateguard/stateguard/impl/sweepstate/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
