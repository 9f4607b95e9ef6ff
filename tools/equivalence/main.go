// Command equivalence checks that the sweep-state and task-state-guard
// commands a team runs today and their replacements answer the same on
// the same calls:
//
//	go run ./tools/equivalence -sweep-old 'python3 scripts/sweep-state.py' -sweep-new sweep-state \
//	    -ledger-old 'python3 -m task_state_guard' -ledger-old-python -ledger-new task-state-guard \
//	    [-fixtures DIR] [-sequences N] [-steps N] [-seed S] [-jobs N]
//
// Either side may be checked alone (the -sweep-* pair, the -ledger-* pair,
// or both). For each side it generates sequences of calls from the
// executable models (model/sweep, model/ledger): the model takes each call
// as it is drawn, and the next one is chosen from the state the model is
// in (the lease holder's writes, a lease contested at the microsecond its
// TTL ends, items closed with each subset of their evidence, a cursor
// moved on and back; each task's and delivery's next edge with its
// registered codes, a reconcile whose clock lands on a deadline or a
// grace's end), plus the misuse the contract defines, calls on a ledger
// that does not exist yet, and the inputs each declared divergence is
// about. It runs each sequence against the old
// and the new command in two fresh temporary directories on one clock
// that moves forward on a fixed schedule (sweep-state's --now and
// --timestamp; task-state-guard's test clock, TASK_STATE_GUARD_TEST_CLOCK=1
// and TASK_STATE_GUARD_TEST_NOW), and after every call compares the exit
// status, stdout and the files: the state file's bytes, or the ledger's
// rows (the doctor's report, every task and every task's events), read
// through this project's read-only view of the ledger, so both sides'
// ledgers are read by one reader.
//
// The Python ledger has no test clock: with -ledger-old-python the old
// ledger command must be a Python interpreter followed by `-m MODULE` or by
// a script (pip's task-state-guard launcher, say), and it is run through a
// small launcher that makes time.time and time.time_ns answer
// TASK_STATE_GUARD_TEST_NOW before the module or script is loaded.
//
// A difference that a declared divergence explains (spec/sweep-state.md
// and spec/task-state-guard.md, section 17; the table is in
// divergences.go) is applied by name: the sequence counts as equivalent,
// the rest of it is not compared (the two sides' files may differ by the
// divergence from then on), and the report says which declared divergences
// were met and how often. Any other difference is printed as a shortened
// reproduction, the fewest calls, in order, that still end in it, ready
// to paste into a shell. The last line is
//
//	N/M sequences equivalent; K differences outside the declared divergences
//
// and the exit status is 0 only when K is 0 (2 for a usage error or a
// command that cannot be run).
//
// With -fixtures DIR (spec/testdata/fixtures in this repository) the
// recordings of the Python tools stand in for an old command as well: every
// recorded call is replayed through the new command, each recording in a
// fresh directory, and its exit status, stdout and file are compared with
// the recording's (the state file's bytes; for the ledger whether its
// bytes changed, its sidecars and its mode), the declared divergences the
// recordings meet (D8, D14, L5) applied by name. Each recording counts as
// one sequence in the last line; -sweep-new or -ledger-new alone is then
// enough. -jobs sets how many sequences or recordings run at once.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line's settings.
type options struct {
	sweepOld, sweepNew, ledgerOld, ledgerNew string
	ledgerOldPython                          bool
	fixtures                                 string
	sequences, steps, jobs                   int
	seed                                     int64
}

// parseOptions reads the command line; false means a usage error, already
// reported on stderr.
func parseOptions(args []string, stderr io.Writer) (options, bool) {
	var o options
	flags := flag.NewFlagSet("equivalence", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&o.sweepOld, "sweep-old", "", "the sweep-state command run today (words split at spaces)")
	flags.StringVar(&o.sweepNew, "sweep-new", "", "the replacement sweep-state command")
	flags.StringVar(&o.ledgerOld, "ledger-old", "", "the task-state-guard command run today (words split at spaces)")
	flags.StringVar(&o.ledgerNew, "ledger-new", "", "the replacement task-state-guard command")
	flags.BoolVar(&o.ledgerOldPython, "ledger-old-python", false, "the old ledger command is PYTHON -m MODULE or PYTHON SCRIPT; pin its clock through time.time")
	flags.StringVar(&o.fixtures, "fixtures", "", "also replay the Python tools' recordings in this folder (spec/testdata/fixtures) through each new command")
	flags.IntVar(&o.sequences, "sequences", 200, "how many sequences to run on each side")
	flags.IntVar(&o.steps, "steps", 12, "calls per sequence")
	flags.IntVar(&o.jobs, "jobs", runtime.GOMAXPROCS(0), "sequences or recordings compared at once")
	flags.Int64Var(&o.seed, "seed", 1, "seed of the generator; the same seed gives the same sequences")
	if err := flags.Parse(args); err != nil {
		return o, false
	}
	// A side needs its new command, and its old one unless the
	// recordings stand in for it.
	sideOK := func(old, new string) bool {
		return new != "" && (old != "" || o.fixtures != "") || old == "" && new == ""
	}
	if !sideOK(o.sweepOld, o.sweepNew) || !sideOK(o.ledgerOld, o.ledgerNew) ||
		(o.sweepNew == "" && o.ledgerNew == "") || o.sequences < 1 || o.steps < 1 || o.jobs < 1 || flags.NArg() > 0 ||
		(o.ledgerOldPython && o.ledgerOld == "") {
		fmt.Fprintln(stderr, "equivalence: give -sweep-old and -sweep-new, or -ledger-old and -ledger-new, or all four "+
			"(with -fixtures, a -*-new alone is enough); -sequences, -steps and -jobs at least 1")
		return o, false
	}
	return o, true
}

func run(args []string, stdout, stderr io.Writer) int {
	o, ok := parseOptions(args, stderr)
	if !ok {
		return 2
	}
	type side struct {
		engine         engine
		oldCmd, newCmd []string
	}
	var sides []side
	if o.sweepNew != "" {
		s := side{engine: sweepEngine(), newCmd: command(o.sweepNew)}
		if o.sweepOld != "" {
			s.oldCmd = command(o.sweepOld)
		}
		sides = append(sides, s)
	}
	if o.ledgerNew != "" {
		s := side{engine: ledgerEngine(), newCmd: command(o.ledgerNew)}
		if o.ledgerOld != "" {
			s.oldCmd = command(o.ledgerOld)
		}
		if o.ledgerOldPython {
			launcherDir, err := os.MkdirTemp("", "equivalence-launcher-")
			if err != nil {
				fmt.Fprintln(stderr, "equivalence:", err)
				return 2
			}
			defer os.RemoveAll(launcherDir)
			s.oldCmd, err = pythonClockCommand(s.oldCmd, launcherDir)
			if err != nil {
				fmt.Fprintln(stderr, "equivalence:", err)
				return 2
			}
		}
		sides = append(sides, s)
	}
	total, equivalent, differences := 0, 0, 0
	for _, s := range sides {
		if o.fixtures != "" {
			r, err := checkRecordings(s.engine, s.newCmd, o.fixtures, o.jobs, stdout)
			if err != nil {
				fmt.Fprintln(stderr, "equivalence:", err)
				return 2
			}
			total += r.replayed
			equivalent += r.replayed - r.differences
			differences += r.differences
			fmt.Fprintln(stdout, r.line(s.engine))
		}
		if s.oldCmd == nil {
			continue
		}
		c := config{s.engine, s.oldCmd, s.newCmd, o.sequences, o.steps, o.seed, o.jobs}
		r, err := check(c, stdout)
		if err != nil {
			fmt.Fprintln(stderr, "equivalence:", err)
			return 2
		}
		total += c.sequences
		equivalent += c.sequences - r.differences
		differences += r.differences
		fmt.Fprintln(stdout, r.declaredLine(c.engine))
	}
	fmt.Fprintf(stdout, "%d/%d sequences equivalent; %d differences outside the declared divergences\n",
		equivalent, total, differences)
	if differences > 0 {
		return 1
	}
	return 0
}

// command splits a command at spaces and makes a program named by a
// relative path absolute, since every call runs in a directory of its own.
func command(text string) []string {
	words := strings.Fields(text)
	if strings.ContainsRune(words[0], '/') || strings.ContainsRune(words[0], filepath.Separator) {
		if abs, err := filepath.Abs(words[0]); err == nil {
			words[0] = abs
		}
	}
	return words
}
