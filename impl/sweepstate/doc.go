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
//	res := eng.Run("sweep.yml", sweepstate.LeaseAcquire{Writer: "nightly", TTLMinutes: 30, Now: time.Now()})
//	if res.Word != sweepstate.WordOK { ... } // LOCKED: another writer holds the lease
//
// Every call answers one status word (Result.Word) and, for some commands,
// a payload: the JSON object the sweep-state command prints after the
// word, which Result.Decode reads into Go values (Result.Cursor and
// Result.Downgraded read cursor-get's and validate's). Result.Reason says
// why for ERROR and CORRUPT. A file that is not a valid state document is
// CORRUPT and is never overwritten. Every ERROR carries Result.Err, which
// errors.Is matches against ErrInvalidCommand (the command broke a rule,
// nothing was touched), ErrIO (the file or its lock could not be reached
// or written), ErrNotAMapping (a hand-edited part of the file the command
// needs) or the context's error. The Example shows a whole sweep.
//
// Commands are Go values: times are time.Time, stamped as the command
// line stamps its clock (UTC, to the microsecond); the zero time means
// the engine's clock (Engine.Clock), read once, before the decision. A
// lease's TTL is whole minutes. Item fields and run counts are any value
// encoding/json can marshal, read by the command line's JSON rules.
// Numbers stay exact when kept as text: give json.Number (or a
// json.RawMessage) to store an integer beyond 64 bits or a float such as
// 1.0, and Decode gives numbers back as json.Number (see UpsertItem and
// Payload).
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
