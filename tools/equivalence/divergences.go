package main

import (
	"strings"
	"unicode"
)

// divergence is one declared difference from the Python tools: its name
// in the spec's section 17 table, the section whose rule it changes, and
// a test that tells whether it explains a difference seen at one call.
// explains gets the call, the new side's outcome before it (the zero
// outcome, no file, before the first call) and both sides' outcomes of
// the call, which differ.
type divergence struct {
	name     string
	spec     string // the spec file whose section 17 lists it
	section  string // the section whose rule it changes
	explains func(s step, before, old, new outcome) bool
}

const (
	sweepSpec  = "spec/sweep-state.md"
	ledgerSpec = "spec/task-state-guard.md"
)

// sweepDivergences are the declared divergences of spec/sweep-state.md
// section 17 that the generated sequences reach. The others need inputs
// the generator does not make (D6, D8: characters and keys the engine
// writes escaped or quoted; D1: a newer schema_version; D4: a key ending
// in a newline; D9: argv that is not UTF-8; D10: a FIFO or a huge file;
// D11, D12: hand-edited files) or are invisible in one process's answers
// (D2, D3, D13).
var sweepDivergences = []divergence{
	{"D5", sweepSpec, "6", func(s step, before, old, new outcome) bool {
		// NaN, Infinity or a number overflowing a float in --json: refused.
		j := flagValue(s.args, "--json")
		return s.args[0] == "upsert-item" && strings.HasPrefix(new.stdout, "ERROR") && new.files == before.files &&
			(strings.Contains(j, "NaN") || strings.Contains(j, "Infinity") || strings.Contains(j, "e999"))
	}},
	{"D7", sweepSpec, "7.3", func(s step, before, old, new outcome) bool {
		// A negative --ttl-minutes is misuse: exit 2, nothing written.
		return strings.HasPrefix(flagValue(s.args, "--ttl-minutes"), "-") && misuse(before, new)
	}},
	{"D14", sweepSpec, "8.4", func(s step, before, old, new outcome) bool {
		// A --now that is not a time is misuse where the lease is stamped.
		now := flagValue(s.args, "--now")
		return now != "" && (now[0] < '0' || now[0] > '9') && misuse(before, new)
	}},
}

// misuse is sweep-state's answer to a bad command line: exit 2, empty
// stdout, the file as it was.
func misuse(before, new outcome) bool {
	return new.code == 2 && new.stdout == "" && new.exists == before.exists && new.files == before.files
}

// ledgerDivergences are the declared divergences of
// spec/task-state-guard.md section 17 that the generated sequences reach.
// The others are about damaged or v1 files (L5, L10), concurrency (L4,
// L11), crash-left files (L12), storage (L9, L14, L15), power loss (L6)
// or an unwritable stdout (L13), which one process's answers on a fresh
// directory cannot show.
var ledgerDivergences = []divergence{
	{"L1", ledgerSpec, "13.6", func(s step, before, old, new outcome) bool {
		// A refused call, or a task command on a missing ledger, creates
		// nothing; the reference answers the same but leaves a new ledger.
		return !before.exists && !new.exists && old.exists &&
			old.code == new.code && old.stdout == new.stdout
	}},
	{"L2", ledgerSpec, "8.6", func(s step, before, old, new outcome) bool {
		// doctor on a missing ledger: InvalidInput, nothing created (the
		// reference makes an empty ledger and calls it healthy).
		return subcommand(s.args) == "doctor" && !before.exists && !new.exists && isClass(new, "InvalidInput")
	}},
	{"L3", ledgerSpec, "14.1", func(s step, before, old, new outcome) bool {
		// Odd spellings of ids and numbers are refused (the reference's
		// int() and float() accept 0x, underscores, signs, spaces and
		// non-ASCII digits).
		return isClass(new, "InvalidInput") && new.files == before.files && hasOddSpelling(s.args)
	}},
	{"L7", ledgerSpec, "13.6", func(s step, before, old, new outcome) bool {
		// An applied reconcile on a missing ledger: InvalidInput, nothing
		// created (the reference makes an empty ledger and answers
		// "applied":true).
		return subcommand(s.args) == "reconcile" && !hasWord(s.args, "--dry-run") &&
			!before.exists && !new.exists && isClass(new, "InvalidInput")
	}},
	{"L8", ledgerSpec, "6.2", func(s step, before, old, new outcome) bool {
		// A start whose deadline overflows: StateConflict, not InvalidInput.
		return subcommand(s.args) == "start" && isClass(new, "StateConflict") && isClass(old, "InvalidInput") &&
			new.files == before.files
	}},
}

func isClass(o outcome, class string) bool {
	return o.code == 2 && o.stdout == `{"error":"`+class+`","ok":false}`+"\n"
}

// explain returns the name of the first declared divergence that explains
// the difference, or "".
func explain(table []divergence, s step, before, old, new outcome) string {
	for _, d := range table {
		if d.explains(s, before, old, new) {
			return d.name
		}
	}
	return ""
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func hasWord(args []string, w string) bool {
	for _, a := range args {
		if a == w {
			return true
		}
	}
	return false
}

// subcommand is the first word after task-state-guard's global options.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--db":
			i++
		case "--allow-external-acl":
		default:
			return args[i]
		}
	}
	return ""
}

// hasOddSpelling reports an id or number that Python's int(s, 16) or
// float(s) reads but this ledger's grammar (spec/task-state-guard.md 14.1,
// 14.2) refuses: a 0x prefix, a plus sign, space around it, an underscore
// between two digits, or a digit outside ASCII. Only words made of digits
// and those marks count, so that a reason code such as deadline_exceeded
// is not taken for one.
func hasOddSpelling(args []string) bool {
	for _, a := range args {
		numeric := a != ""
		for _, r := range a {
			if !(r < unicode.MaxASCII && (isHexDigit(byte(r)) || strings.ContainsRune("_.+- xX", r)) || unicode.IsDigit(r)) {
				numeric = false
			}
		}
		if !numeric || strings.HasPrefix(a, "--") {
			continue
		}
		if strings.Contains(strings.ToLower(a), "0x") || strings.HasPrefix(a, "+") || strings.TrimSpace(a) != a {
			return true
		}
		for i := 1; i+1 < len(a); i++ {
			if a[i] == '_' && isHexDigit(a[i-1]) && isHexDigit(a[i+1]) {
				return true
			}
		}
		for _, r := range a {
			if r > unicode.MaxASCII && unicode.IsDigit(r) {
				return true
			}
		}
	}
	return false
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
