package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Coverage guidance and SQLite. A fuzzing build instruments every package
// it links for coverage, modernc's SQLite and the C library it is
// transpiled with included: under that instrumentation a ledger input
// costs about 2.5 times its CPU time. For the targets
// in sqliteUnguided the coverage that matters is the project's own code
// (the operations, the doctor's Go side, the read-only view, the -wal
// reader, the model), and what SQLite's own counters add is mostly noise:
// a page split or a different pager path counts as a new input and is
// kept and minimised. Those targets are built with modernc.org/sqlite/lib
// and modernc.org/libc left uninstrumented; their oracles are unchanged.
// The same goes for the standard library and the rest of modernc (the
// database/sql driver): their counters moved with how often a pooled
// connection was reused, how a float was formatted for a target's
// operation log or how many rows a scan copied, and each new count made
// an input "interesting" that the toolchain then ran again and minimised
// for up to -minimizetime; FuzzLedgerSequence's 30 s runs queued 26 to 41
// such inputs, 8 to 12 without those counters, and an input cost a
// quarter less CPU. The project's own packages keep
// their instrumentation. FuzzReadOnlyLedger, whose input is database
// bytes that SQLite itself parses, keeps the instrumentation everywhere,
// as does every target with -sqlitecover. The uninstrumented standard
// library is built once per build cache (about 2 to 4 minutes on the
// 2-core machine), and is then shared by the four targets.
//
// go test appends its instrumentation flag (-d=libfuzzer) to every
// package's compiler flags, after the -gcflags given, so no -gcflags can
// turn it off. fuzzrun therefore gives those packages the marker
// uninstrumentedFlag through -gcflags (which also gives their compiled
// objects a build-cache key of their own: an uninstrumented object never
// stands in for an instrumented one) and runs itself as go's -toolexec,
// which, for a compiler invocation carrying the marker, drops the
// instrumentation flag. Everything else is run unchanged.

// sqliteUnguided are the targets (package name.Target) fuzzed without
// SQLite's coverage.
var sqliteUnguided = map[string]bool{
	"ledgerops.FuzzLedgerSequence": true,
	"ledgerops.FuzzDamagedLedger":  true,
	"ledgerops.FuzzV1Migration":    true,
	"ledgerdb.FuzzReadOnlyWAL":     true,
}

// unguided reports whether t is built without SQLite's coverage.
func (c config) unguided(t target) bool {
	return !c.sqliteCover && sqliteUnguided[t.short()+"."+t.name]
}

func countUnguided(c config, targets []target) int {
	n := 0
	for _, t := range targets {
		if c.unguided(t) {
			n++
		}
	}
	return n
}

// uninstrumentedPkgs are the transpiled C (SQLite and its C library),
// the rest of modernc and the standard library: everything the four
// targets link but the project's own code and its test helpers.
var uninstrumentedPkgs = []string{"modernc.org/...", "std"}

const (
	// uninstrumentedFlag marks a compilation to run without coverage
	// instrumentation. On its own (without the toolexec) it changes
	// nothing: go test's -d=libfuzzer comes after it and wins.
	uninstrumentedFlag = "-d=libfuzzer=0"
	instrumentFlag     = "-d=libfuzzer"
	// toolexecEnv set to 1 makes fuzzrun act as go's -toolexec.
	toolexecEnv = "STATEGUARD_FUZZRUN_TOOLEXEC"
)

// unguidedArgs are the go test arguments that build a target without
// SQLite's coverage; self is fuzzrun's own executable.
func unguidedArgs(self string) []string {
	args := []string{"-toolexec=" + self}
	for _, p := range uninstrumentedPkgs {
		args = append(args, "-gcflags="+p+"="+uninstrumentedFlag)
	}
	return args
}

// toolArgs is what the toolexec runs for a tool invocation: a compiler
// invocation that carries uninstrumentedFlag loses every instrumentFlag;
// anything else is unchanged.
func toolArgs(args []string) []string {
	if len(args) == 0 {
		return args
	}
	name := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	marked := false
	for _, a := range args[1:] {
		marked = marked || a == uninstrumentedFlag
	}
	if name != "compile" || !marked {
		return args
	}
	out := []string{args[0]}
	for _, a := range args[1:] {
		if a != instrumentFlag {
			out = append(out, a)
		}
	}
	return out
}

// toolexec runs the tool go asked for (args[0]) with toolArgs.
func toolexec(args []string) int {
	args = toolArgs(args)
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fuzzrun: toolexec without a tool")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "fuzzrun: toolexec:", err)
	return 2
}
