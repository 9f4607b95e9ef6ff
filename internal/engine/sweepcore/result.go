package sweepcore

import "github.com/stateguard/stateguard/model/value"

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

// Result is the answer of one call, as the command line prints it and
// the Go API (impl/sweepstate) converts it into its own Result.
type Result struct {
	Word Word
	// Payload is the JSON object printed on the line after the word; nil
	// is no payload line.
	Payload *value.Map
	// Reason says why, for ERROR and CORRUPT: fixed phrases and line
	// numbers, never a value from the file or the command line.
	Reason string
	// Metrics is the answer of an OK Metrics call, nil otherwise.
	Metrics *StateMetrics
	// Fault is which kind of ERROR this is (NoFault for every other word).
	Fault Fault
	// Err is non-nil exactly when Word is ERROR: the context's error for
	// Ended; otherwise the failure's own text (Reason's phrase, with the
	// rule or the operating system's error number wrapped when there is
	// one), which the Go API wraps in the sentinel error of its Fault.
	Err error
}

// Fault is the kind of an ERROR answer.
type Fault uint8

const (
	NoFault Fault = iota
	// InvalidCommand: the command breaks a rule of the command line's
	// arguments; nothing was read or written.
	InvalidCommand
	// IOFailure: the state file, its directory or its lock file could not
	// be reached, locked or written; the file is as it was.
	IOFailure
	// NotAMapping: the file parses, but a part the command needs (items,
	// sources, a source entry) is not a mapping; nothing was written.
	NotAMapping
	// Ended: the call's context ended before the write; nothing was
	// written.
	Ended
)
