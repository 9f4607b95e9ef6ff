// Package cli is the command line of the sweep state engine: flag parsing
// compatible with Python's argparse, the subcommand table, and the two-line
// answer (status word, then the JSON payload written like Python's
// json.dumps).
//
// Main returns the exit status instead of exiting, so cmd/sweep-state and the
// script tests (testscript) call it the same way.
package sweepcli
