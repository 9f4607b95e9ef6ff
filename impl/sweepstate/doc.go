// Package sweepstate is the sweep state engine: the only writer of one YAML
// state file holding a lease with a TTL, per-source resume cursors, id-keyed
// items (with evidence-checked "closed" items and redaction of sensitive
// text) and the last run's outcome. It is the engine behind the sweep-state
// command; the normative contract is spec/sweep-state.md in the repository.
//
// # Getting started
//
// Build a Command value and run it against the state file's path:
//
//	eng := &sweepstate.Engine{}
//	res := eng.Run("sweep.yml", sweepstate.LeaseAcquire{Writer: "nightly", Now: "2026-07-02T12:00:00Z"})
//	if res.Word != sweepstate.WordOK { ... } // LOCKED: another writer holds the lease
//
// Every call answers one status word (Result.Word) and, for some commands,
// a JSON-like payload (Result.Payload, whose MarshalJSON writes the bytes
// the sweep-state command prints); Result.Reason says why for ERROR and
// CORRUPT. A file that is not a valid state document is CORRUPT and is never
// overwritten. A command that breaks one of the command line's argument
// rules (a negative TTL, an unknown outcome, text that is not UTF-8, a nil
// Command) answers ERROR with Result.Err wrapping ErrInvalidCommand, before
// any file is touched. The Example shows a whole sweep.
//
// Time is an input: give UpsertItem, CursorAdvance and LeaseAcquire an
// RFC 3339 UTC time in Now; only when it is empty is Engine.Clock read,
// once, before the decision. RunRecord's Timestamp is stored as given,
// empty too: the engine never invents it. A lease stamped with a time that
// cannot be parsed is never considered stale.
//
// # Concurrency and durability
//
// One call is one load, one decision and at most one write. Every mutating
// command holds an exclusive lock (flock on "<state>.lock"; LockFileEx on
// Windows) for its whole load-decide-write cycle, so calls from any number
// of goroutines or processes serialise. Run waits for a held lock without a
// time limit, as the command line does; RunContext stops waiting when its
// context ends and then writes nothing. Writes go to a fresh temporary file that is synced and renamed
// over the state file, then the directory is synced. An Engine has no
// mutable state and may be shared. Local filesystems only (no NFS).
package sweepstate
