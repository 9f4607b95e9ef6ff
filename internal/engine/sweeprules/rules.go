// Package sweeprules holds the rules a sweep-state command must meet before
// it reaches a decision, read once and used by both the engine
// (impl/sweepstate, which refuses a Command that breaks them) and the
// command line (internal/cli/sweepcli, which reports the same breaks as misuse,
// exit 2, in argparse's order). A rule here only says whether an argument is
// acceptable; what a command then does is the engine's decision alone.
//
// The rules (spec/sweep-state.md §16.3, with divergences D7, D9 and D14):
//   - --ttl-minutes is an integer as Python's int() reads text, and not
//     negative;
//   - --now, when given and not empty, is a time the lease's staleness
//     check can read (D14): a lease stamped with anything else could never
//     be proved stale, and every other writer would be locked out for good;
//   - --outcome is one of Outcomes;
//   - every argument is valid UTF-8 (the decision would see the raw bytes
//     while the writer stores U+FFFD for them, so a writer could lock itself
//     out of its own lease and two ids could become one key).
//
// Every error text is a fixed phrase: it never holds the rejected value.
package sweeprules

import (
	"errors"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/isotime"
)

// outcomes are the run-record outcomes the contract allows
// (spec/sweep-state.md §10), in help order.
var outcomes = []string{"completed", "aborted-locked", "partial", "failed"}

// Outcomes returns the allowed run-record outcomes in help order (a fresh
// slice: the list itself cannot be changed).
func Outcomes() []string { return slices.Clone(outcomes) }

var (
	// ErrNotInt is --ttl-minutes text that Python's int() refuses.
	ErrNotInt = errors.New("invalid int value")
	// ErrNegativeTTL is a TTL below zero (D7).
	ErrNegativeTTL = errors.New("must not be negative")
	// ErrOutcome is an outcome outside Outcomes.
	ErrOutcome = errors.New("invalid choice (choose from " + strings.Join(outcomes, ", ") + ")")
	// ErrNotUTF8 is an argument that is not valid UTF-8.
	ErrNotUTF8 = errors.New("not valid UTF-8")
	// ErrNotATime is a --now the staleness check cannot read (D14).
	ErrNotATime = errors.New("invalid time value")
)

// CheckNow refuses a --now that is given, not empty, and not a time the
// staleness check reads (spec/sweep-state.md §7.5, §8.1): the lease would
// be stamped with it, and a lease whose stamp does not parse is never
// stale. An empty --now means the clock.
func CheckNow(s string) error {
	if s == "" {
		return nil
	}
	if _, ok := isotime.Parse(s); !ok {
		return ErrNotATime
	}
	return nil
}

// ParseTTL reads --ttl-minutes text: Python's int(), then CheckTTL.
func ParseTTL(s string) (*big.Int, error) {
	n, ok := PythonInt(s)
	if !ok {
		return nil, ErrNotInt
	}
	if err := CheckTTL(n); err != nil {
		return nil, err
	}
	return n, nil
}

// CheckTTL refuses a negative TTL; nil (the default of 60) is acceptable.
func CheckTTL(n *big.Int) error {
	if n != nil && n.Sign() < 0 {
		return ErrNegativeTTL
	}
	return nil
}

// CheckOutcome refuses an outcome outside Outcomes.
func CheckOutcome(s string) error {
	if !slices.Contains(outcomes, s) {
		return ErrOutcome
	}
	return nil
}

// CheckText refuses an argument that is not valid UTF-8.
func CheckText(s string) error {
	if !utf8.ValidString(s) {
		return ErrNotUTF8
	}
	return nil
}
