// Package sweepcli is the command line of the sweep state engine: the
// subcommand table (read by Python's argparse rules, internal/cli/argparse),
// its help texts and misuse messages, and the two-line
// answer (status word, then the JSON payload written like Python's
// json.dumps).
//
// Main returns the exit status instead of exiting, so cmd/sweep-state and the
// script tests (testscript) call it the same way.
package sweepcli
