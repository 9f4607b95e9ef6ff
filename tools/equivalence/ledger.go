package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/stateguard/stateguard/impl/ledger"
)

// The test clock's environment (spec/task-state-guard.md 15).
const (
	testClockEnv = "TASK_STATE_GUARD_TEST_CLOCK"
	testNowEnv   = "TASK_STATE_GUARD_TEST_NOW"
)

// ledgerBase is the first time of every sequence: 2001-01-01T00:00:00Z,
// the base of the reference's recordings.
const ledgerBase = 978307200.0

func ledgerEngine() engine {
	return engine{
		name:        "ledger",
		file:        "tasks.sqlite",
		generate:    generateLedger,
		snapshot:    ledgerSnapshot,
		env:         func(s step) []string { return []string{testClockEnv + "=1", testNowEnv + "=" + s.now} },
		divergences: ledgerDivergences,
	}
}

var (
	ledgerIDs = []string{
		"7a5c0001-0000-4000-8000-000000000001",
		"7a5c0002-0000-4000-8000-000000000002",
		"7a5c0003-0000-4000-8000-000000000003",
	}
	// overflowID is the task of the deadline-overflow scenario (L8).
	overflowID = "7a5c0004-0000-4000-8000-000000000004"
	// oddIDs are 32 characters that the reference's int(s, 16) reads as
	// an id and this ledger refuses (L3).
	oddIDs   = []string{"0x5c0001000040008000000000000001", "+a5c0001000040008000000000000001", " 7a5c000100004000800000000000001"}
	oddNums  = []string{"9_00", "\u0666\u0660\u0660", "1_0"}
	timeouts = []string{"0", "0.5", "30", "900", "1e10", "120.25"}
	graces   = []string{"0", "60", "600", "1055", "0.5"}
)

// ledgerCall is task-state-guard's command line for the generated ledger
// (with the Windows acknowledgement where a ledger needs it).
func ledgerCall(args ...string) []string {
	head := []string{"--db", "tasks.sqlite"}
	if runtime.GOOS == "windows" {
		head = append([]string{"--allow-external-acl"}, head...)
	}
	return append(head, args...)
}

// ledgerSnapshot reads the ledger at path through this project's read-only
// view: the doctor's report, then every task in id order with its events.
// A ledger the view refuses reads as its refusal's class and reason.
func ledgerSnapshot(path string) (string, error) {
	l, err := ledger.Open(path, ledger.Options{ReadOnly: true, AllowExternalACL: runtime.GOOS == "windows"})
	if err != nil {
		return "unreadable: " + ledger.Reason(err), nil
	}
	defer l.Close()
	var b strings.Builder
	report, err := l.Doctor()
	if err != nil {
		return "doctor refused: " + ledger.Reason(err), nil
	}
	line, err := json.Marshal(report)
	if err != nil {
		return "", err
	}
	b.Write(line)
	b.WriteByte('\n')
	page := ledger.ListPage{Next: ""}
	for first := true; first || page.Next != ""; first = false {
		page, err = l.List(ledger.ListFilter{After: page.Next, Limit: 1000})
		if err != nil {
			return "list refused: " + ledger.Reason(err), nil
		}
		for _, t := range page.Tasks {
			line, err := json.Marshal(t)
			if err != nil {
				return "", err
			}
			b.Write(line)
			if t.PayloadHash != nil {
				b.WriteString(" payload " + *t.PayloadHash)
			}
			b.WriteByte('\n')
			events, err := l.History(t.ID)
			if err != nil {
				return "history refused: " + ledger.Reason(err), nil
			}
			for _, e := range events {
				line, err := json.Marshal(e)
				if err != nil {
					return "", err
				}
				b.WriteString("  ")
				b.Write(line)
				b.WriteByte('\n')
			}
		}
	}
	return b.String(), nil
}

// clockLauncher runs a Python module or script with time.time and
// time.time_ns answering TASK_STATE_GUARD_TEST_NOW: the Python ledger has
// no test clock of its own. The two are replaced before the module or
// script is loaded, so a `from time import time` in it sees the pinned
// one too; sys.path[0] is what python -m or python SCRIPT would make it.
const clockLauncher = `import os, runpy, sys, time
_now = float(os.environ["TASK_STATE_GUARD_TEST_NOW"])
time.time = lambda: _now
time.time_ns = lambda: int(_now * 1000000000)
if len(sys.argv) > 2 and sys.argv[1] == "-m":
    module = sys.argv[2]
    sys.argv = [module] + sys.argv[3:]
    sys.path[0] = os.getcwd()
    runpy.run_module(module, run_name="__main__", alter_sys=True)
else:
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    runpy.run_path(sys.argv[0], run_name="__main__")
`

// pythonClockCommand turns `PYTHON -m MODULE` or `PYTHON SCRIPT` into the
// same run through the clock launcher, written into dir.
func pythonClockCommand(words []string, dir string) ([]string, error) {
	if len(words) < 2 || (words[1] == "-m" && len(words) != 3) || (words[1] != "-m" && len(words) != 2) {
		return nil, errors.New("-ledger-old-python needs -ledger-old to be 'PYTHON -m MODULE' or 'PYTHON SCRIPT'")
	}
	if words[1] != "-m" {
		script, err := filepath.Abs(words[1])
		if err != nil {
			return nil, err
		}
		words = []string{words[0], script}
	}
	launcher := filepath.Join(dir, "pin_clock.py")
	if err := os.WriteFile(launcher, []byte(clockLauncher), 0o600); err != nil {
		return nil, fmt.Errorf("writing the clock launcher: %w", err)
	}
	return append([]string{words[0], launcher}, words[1:]...), nil
}
