package sweepstate

import (
	"math/big"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
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
	// Payload is the JSON line after the word; Payload.Map is nil when
	// there is no payload line.
	Payload Payload
	// Reason is a one-line explanation for ERROR (the CLI prints it on
	// stderr) and for CORRUPT (for library callers only: the CLI prints the
	// word alone), such as the parser's "line 3: ambiguous unquoted scalar"
	// or "the state file has no schema_version". It is built from fixed
	// phrases and line numbers and never contains a value from the file or
	// the command line.
	Reason string
	// Metrics is the answer of an OK Metrics call, nil otherwise.
	Metrics *StateMetrics
	// Err is non-nil only when the call did nothing at all (nothing read,
	// nothing written) because of the caller: it wraps ErrInvalidCommand
	// for a command the CLI would refuse as misuse, or is the context's
	// error (RunContext). Word is then ERROR and Reason says why.
	Err error
}

// Payload is the JSON object an answer carries on the line after its word
// (for read, the whole document). The map is the engine's own: it is not
// shared with any other call, and changing it changes nothing on disk.
type Payload struct{ *value.Map }

// MarshalJSON writes the payload exactly as the sweep-state command prints
// it after the word (Python's json.dumps with its defaults: ", " and ": "
// between elements, keys in the document's order, non-ASCII characters as
// \u escapes, integers of any size in full), without the newline; a
// Payload without a map is null. json.Marshal compacts what a Marshaler
// writes and escapes <, > and & in strings, so its bytes differ from the
// command's by those spaces and escapes only: the same values in the same
// order. Call MarshalJSON itself for the command's bytes.
func (p Payload) MarshalJSON() ([]byte, error) {
	if p.Map == nil {
		return []byte("null"), nil
	}
	return pyjson.Encode(p.Map), nil
}

// Command is one subcommand and its arguments. The engine checks every
// command by the rules the sweep-state command line applies to its
// arguments (spec/sweep-state.md §16.3) before it touches the file, and
// answers a command that breaks one with ERROR and an Err wrapping
// ErrInvalidCommand:
//   - LeaseAcquire.TTLMinutes must not be negative (nil means 60);
//   - the Now of LeaseAcquire, UpsertItem and CursorAdvance, when not
//     empty, must be a time the lease's staleness check reads (spec §8.1,
//     D14): a lease stamped with anything else is never stale;
//   - RunRecord.Outcome must be "completed", "aborted-locked", "partial"
//     or "failed";
//   - every string field must be valid UTF-8;
//   - the command must not be nil (a non-nil pointer to a command is
//     accepted as the command itself).
//
// Empty strings are accepted where the command line accepts an empty
// value: UpsertItem{Source: "", ID: ""} merges into the item keyed ":",
// as the command line's upsert-item with empty --source and --id does. An empty Writer never holds
// the lease: LeaseAcquire{Writer: ""} stores a lease that no command can
// use, and the lease-holder commands answer LEASE-LOST for it.
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
	// TTLMinutes is nil for the default of 60; a negative TTL is refused
	// (ErrInvalidCommand), as the command line refuses it (D7).
	TTLMinutes *big.Int
	Now        string
}

// LeaseRelease drops the lease held by Writer.
type LeaseRelease struct{ Writer string }

// RunRecord replaces last_run. Outcome must be "completed",
// "aborted-locked", "partial" or "failed".
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
