// Package sweepcore is the sweep state engine's core: the commands in the
// command line's form, the load of the state file, the decision and the
// write. Every argument of a command is text, kept verbatim (a --now in
// any form the staleness check reads, --json and --counts as JSON text the
// engine decodes itself, a --ttl-minutes of any size). The command line
// (internal/cli/sweepcli) builds these commands and prints Run's Result;
// the Go API (impl/sweepstate) turns its typed commands into them and
// Run's Result into its own, so both reach the same decision.
//
// Files: commands.go (the commands), result.go (the answer and its
// faults), check.go (the argument rules), engine.go (Run: lock, load,
// decide, write; the load's checks), split.go (which items a command's
// load parses), decide.go (the decision of each command), metrics.go
// (metrics' counts), readtext.go (read's payload as text), pyvalue.go
// (Python's truth, str and repr of the file's values), shared.go (what the
// Go API's merge of three files uses of the load, the answers and the
// values' helpers).
package sweepcore

import "math/big"

// Command is one subcommand and its argument texts. The set is closed:
// only the types of this package are commands.
type Command interface{ argsCommand() }

// Read answers the whole document.
type Read struct{}

// Validate downgrades closed items that lack evidence.
type Validate struct{}

// UpsertItem merges JSON (an object, as JSON text) into the item
// <Source>:<ID>.
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
	// TTLMinutes is nil for the default of 60.
	TTLMinutes *big.Int
	Now        string
}

// LeaseRelease drops the lease held by Writer.
type LeaseRelease struct{ Writer string }

// RunRecord replaces last_run; Counts is JSON text (text that does not
// decode is stored as {}, as the reference does).
type RunRecord struct {
	Writer, Outcome, Counts, Timestamp string
}

// ImportLegacy brings a legacy state file into the state.
type ImportLegacy struct {
	File string
	// SourceMap is the --source-map JSON text; nil when the flag is absent.
	SourceMap *string
}

// Metrics answers counts for monitoring at Now ("" means the clock).
type Metrics struct{ Now string }

func (Read) argsCommand()          {}
func (Validate) argsCommand()      {}
func (UpsertItem) argsCommand()    {}
func (CursorGet) argsCommand()     {}
func (CursorAdvance) argsCommand() {}
func (LeaseAcquire) argsCommand()  {}
func (LeaseRelease) argsCommand()  {}
func (RunRecord) argsCommand()     {}
func (ImportLegacy) argsCommand()  {}
func (Metrics) argsCommand()       {}
