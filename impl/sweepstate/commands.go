package sweepstate

import (
	"math/big"

	"github.com/stateguard/stateguard/model/value"
)

// Word is the status word printed on the first line of every answer.
type Word string

// The status words of spec/sweep-state.md §14.
const (
	WordOK             Word = "OK"
	WordNoState        Word = "NO-STATE"
	WordCorrupt        Word = "CORRUPT"
	WordLocked         Word = "LOCKED"
	WordStaleReclaimed Word = "STALE-RECLAIMED"
	WordLeaseLost      Word = "LEASE-LOST"
	WordRefused        Word = "REFUSED"
	WordError          Word = "ERROR"
)

// Result is the answer of one engine call.
type Result struct {
	Word Word
	// Payload is the JSON line after the word; nil means no payload line.
	Payload *value.Map
	// Reason is a one-line explanation for ERROR (the CLI prints it on
	// stderr) and for CORRUPT (for library callers only: the CLI prints the
	// word alone), such as the parser's "line 3: ambiguous unquoted scalar"
	// or "the state file has no schema_version". It is built from fixed
	// phrases and line numbers and never contains a value from the file or
	// the command line.
	Reason string
}

// Command is one subcommand with its already validated arguments.
type Command interface {
	// mutating reports whether the command takes the file lock and may write.
	mutating() bool
}

// Read answers the whole document.
type Read struct{}

// Validate downgrades closed items that lack evidence.
type Validate struct{}

// UpsertItem merges JSON (an object) into the item <Source>:<ID>.
type UpsertItem struct {
	Source, ID, JSON, Writer string
	Now                      string // "" means the engine's clock
}

// CursorGet answers the cursor of Source.
type CursorGet struct{ Source string }

// CursorAdvance moves the cursor of Source to To, past item PastItem.
type CursorAdvance struct {
	Source, To, PastItem, Writer string
	Now                          string
}

// LeaseAcquire takes, re-stamps or reclaims the lease.
type LeaseAcquire struct {
	Writer string
	// TTLMinutes is nil for the default of 60; the CLI refuses negatives (D7).
	TTLMinutes *big.Int
	Now        string
}

// LeaseRelease drops the lease held by Writer.
type LeaseRelease struct{ Writer string }

// RunRecord replaces last_run.
type RunRecord struct {
	Writer, Outcome, Counts, Timestamp string
}

// ImportLegacy brings a legacy state file into the state.
type ImportLegacy struct {
	File string
	// SourceMap is the --source-map JSON text; nil when the flag is absent.
	SourceMap *string
}

func (Read) mutating() bool          { return false }
func (CursorGet) mutating() bool     { return false }
func (Validate) mutating() bool      { return true }
func (UpsertItem) mutating() bool    { return true }
func (CursorAdvance) mutating() bool { return true }
func (LeaseAcquire) mutating() bool  { return true }
func (LeaseRelease) mutating() bool  { return true }
func (RunRecord) mutating() bool     { return true }
func (ImportLegacy) mutating() bool  { return true }

// Outcomes lists the run-record outcomes the contract allows (spec/sweep-state.md §10).
var Outcomes = []string{"completed", "aborted-locked", "partial", "failed"}
