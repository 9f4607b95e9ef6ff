package sweepstate

import (
	"time"
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
	// Payload is the JSON object the sweep-state command prints on the
	// line after the word; its zero value (IsZero) is no payload line.
	// Decode, Cursor and Downgraded read it as Go values.
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
	// Err is non-nil exactly when Word is ERROR, for errors.Is:
	//   - ErrInvalidCommand: the command breaks a rule (see Command);
	//     nothing was read or written;
	//   - the context's error (RunContext): nothing was written;
	//   - ErrIO: the state file, its directory or its lock file could not
	//     be reached, locked or written (the file is as it was); the
	//     operating system's error number is wrapped too when there is one,
	//     so errors.Is(res.Err, fs.ErrPermission) works;
	//   - ErrNotAMapping: the file parses, but a part the command needs
	//     (items, sources, a source entry) is not a mapping; nothing was
	//     written.
	//
	// Its text is Reason's fixed phrase after the sentinel's; it holds no
	// path and no value.
	Err error
}

// Command is one subcommand and its arguments: one of Read, Validate,
// UpsertItem, CursorGet, CursorAdvance, LeaseAcquire, LeaseRelease,
// RunRecord, ImportLegacy and Metrics, given by value. The set is closed
// (no other type can be a Command) and a pointer to a command is not one:
// Run answers it, and nil, with ERROR wrapping ErrInvalidCommand.
//
// The engine checks every command by the rules the sweep-state command
// line applies to its arguments (spec/sweep-state.md §16.3) before it
// touches the file, and answers a command that breaks one with ERROR and
// an Err wrapping ErrInvalidCommand; Reason names the field, never its
// value:
//   - every string must be valid UTF-8 (the file would hold U+FFFD where
//     the decision saw other bytes, and a writer could lock itself out);
//   - LeaseAcquire.TTLMinutes must not be negative;
//   - RunRecord.Outcome must be one of the Outcome constants and
//     RunRecord.Timestamp must not be zero;
//   - a time must lie in the years 1 to 9999 (the lease's staleness check
//     could not read its text, and a lease stamped with it would never be
//     stale);
//   - UpsertItem.Fields must encode as a JSON object, and
//     RunRecord.Counts as JSON (see UpsertItem for the rules).
//
// Empty strings are accepted where the command line accepts an empty
// value: UpsertItem{Source: "", ID: ""} merges into the item keyed ":",
// as the command line's upsert-item with empty --source and --id does. An
// empty Writer never holds the lease: LeaseAcquire{Writer: ""} stores a
// lease that no command can use, and the lease-holder commands answer
// LEASE-LOST for it.
//
// # Times
//
// A time is stamped in the file as the sweep-state command writes its
// clock: in UTC, as Python's isoformat writes it, to the microsecond
// ("2026-07-02T12:00:00+00:00"; finer digits are dropped). The zero Now
// of UpsertItem, CursorAdvance, LeaseAcquire and Metrics means the
// engine's clock (Engine.Clock), read once, before the decision.
type Command interface{ isCommand() }

// Read answers the whole document as the payload (NO-STATE when there is
// no file); Result.Decode reads it into Go values.
type Read struct{}

// Validate downgrades closed items that lack evidence to fix_pending and
// answers their keys (Result.Downgraded).
type Validate struct{}

// UpsertItem merges Fields into the item <Source>:<ID> (lease holder only).
//
// Fields is encoded with encoding/json's Marshal and the text is read as
// the sweep-state command reads --json (Python's json rules): it must be
// a JSON object. A map[string]any, a struct with json tags and a
// json.RawMessage all serve; the file writes an item's keys in its own
// order (spec/sweep-state.md §15.1.6), so the order Fields gives them does
// not matter. For the values:
//   - integers (int, int64, uint64, *big.Int, json.Number) keep every
//     digit, beyond 64 bits too;
//   - a float64 is written by encoding/json, and one whose value is whole
//     loses its fraction (1.0 is written 1 and stored as the integer 1);
//     json.Number("1.0") or a json.RawMessage keeps a float a float, and
//     the file and read's payload then hold Python's text for it ("1.0",
//     "1e+16"), which Result.Decode gives back as a json.Number;
//   - a string that is not valid UTF-8 is refused in a json.RawMessage and
//     written with U+FFFD by encoding/json elsewhere.
//
// The CLI's "--json" refusals (not JSON, NaN or Infinity, not an object)
// are, here, refusals of the command (ErrInvalidCommand) before the file
// is touched.
type UpsertItem struct {
	Source, ID string
	Fields     any
	Writer     string
	Now        time.Time
}

// CursorGet answers the cursor of Source (Result.Cursor).
type CursorGet struct{ Source string }

// CursorAdvance moves the cursor of Source to To, past item PastItem (lease
// holder only). It is REFUSED when the item is not recorded or To sorts
// before the cursor (spec/sweep-state.md §9.3).
type CursorAdvance struct {
	Source, To, PastItem, Writer string
	Now                          time.Time
}

// DefaultTTLMinutes is the lease's time to live when LeaseAcquire gives 0,
// as when the command line has no --ttl-minutes.
const DefaultTTLMinutes = 60

// LeaseAcquire takes, re-stamps or reclaims the lease. It answers LOCKED
// while another writer holds a lease that is not provably stale, and
// STALE-RECLAIMED when it takes over a stale one (Result.Decode reads the
// payload's previous_writer and previous_timestamp).
type LeaseAcquire struct {
	Writer string
	// TTLMinutes is the lease's time to live in whole minutes: 0 means
	// DefaultTTLMinutes, a negative TTL is refused (ErrInvalidCommand).
	TTLMinutes int
	Now        time.Time
}

// LeaseRelease drops the lease held by Writer (LEASE-LOST when another
// writer holds it; OK when nobody does).
type LeaseRelease struct{ Writer string }

// Outcome is a run's outcome as RunRecord stores it.
type Outcome string

// The outcomes RunRecord accepts (spec/sweep-state.md §10).
const (
	OutcomeCompleted     Outcome = "completed"
	OutcomeAbortedLocked Outcome = "aborted-locked"
	OutcomePartial       Outcome = "partial"
	OutcomeFailed        Outcome = "failed"
)

// RunRecord replaces last_run with the run's outcome, counts and time.
type RunRecord struct {
	Writer  string
	Outcome Outcome
	// Counts is stored as JSON, by the rules of UpsertItem.Fields (any
	// JSON value; nil stores {}).
	Counts any
	// Timestamp is the run's time, stamped as Now is; it must not be zero.
	Timestamp time.Time
}

// ImportLegacy brings a legacy state file into the state: its channels'
// cursors and its items (Result.Decode reads cursors_imported and
// items_imported).
type ImportLegacy struct {
	File string
	// SourceMap maps a legacy channel id to the source id its cursor is
	// stored under; a channel it does not name keeps its id. Nil maps
	// nothing.
	SourceMap map[string]string
}

func (Read) isCommand()          {}
func (Validate) isCommand()      {}
func (UpsertItem) isCommand()    {}
func (CursorGet) isCommand()     {}
func (CursorAdvance) isCommand() {}
func (LeaseAcquire) isCommand()  {}
func (LeaseRelease) isCommand()  {}
func (RunRecord) isCommand()     {}
func (ImportLegacy) isCommand()  {}
func (Metrics) isCommand()       {}
