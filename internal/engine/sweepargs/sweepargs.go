// Package sweepargs holds the sweep-state commands as the command line
// gives them: every argument is text, kept verbatim (a --now in any form
// the staleness check reads, --json and --counts as JSON text the engine
// decodes itself, a --ttl-minutes of any size). The command line
// (internal/cli/sweepcli) builds them and runs them through Run; the Go
// API's typed commands (impl/sweepstate) become these before the decision,
// so both reach the same decision.
package sweepargs

import (
	"context"
	"math/big"
	"time"
)

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

// Runner runs cmd against the state file at path as the engine's
// RunContext runs a typed command, reading clock (nil: the system clock)
// for an empty Now. Its answer is a sweepstate.Result, given as any
// because this package cannot name that type (package sweepstate imports
// this one). Package sweepstate sets Runner when it is initialised, so
// any program that can name a Result finds it set.
var Runner func(ctx context.Context, clock func() time.Time, path string, cmd Command) any
