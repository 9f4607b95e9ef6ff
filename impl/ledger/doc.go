// Package ledger is an embedded, crash-safe task and delivery ledger on
// SQLite (pure Go, no cgo): the engine behind the task-state-guard command.
//
// Every task has two state machines kept apart: the task itself (queued,
// running, then succeeded, failed, timed_out or cancelled) and its delivery
// (pending, then delivered, failed or not_applicable). After a restart,
// Reconcile times out work whose worker is gone and settles deliveries that
// waited too long, with explicit grace periods and a dry run; Doctor checks
// the file and its invariants and reports counts only. The normative
// contract is spec/task-state-guard.md in the repository.
//
// # Getting started
//
// Open a ledger (creating it, its directory chain and the schema when
// needed), then drive tasks through it:
//
//	l, err := ledger.Open("/var/lib/myapp/tasks.sqlite", ledger.Options{})
//	if err != nil { ... }
//	defer l.Close()
//	t, err := l.Create(ledger.CreateParams{}) // delivery required; Internal: true for none
//	t, err = l.Start(t.ID)
//	t, err = l.CloseTask(t.ID, ledger.StatusSucceeded, ledger.CodeCompleted)
//	t, err = l.SetDelivery(t.ID, ledger.DeliveryDelivered, ledger.CodeTransportAcknowledged)
//	rep, err := l.Reconcile(ledger.ReconcileOptions{DryRun: true}) // graces 600 s, as the CLI's
//
// Reason codes are typed constants (CodeCompleted, ...; NoCode for none).
//
// A program that passes on what its own users typed, as the command line
// does, has the reference's argument forms too: CheckPath and
// ValidPayloadHash judge a path's text and a fingerprint before anything is
// opened, DatabaseMissing tells an absent ledger from one to open,
// CloseTaskOptionalCode and SetDeliveryOptionalCode take a reason code that
// may be absent or given empty.
// A Task marshals to JSON exactly as the command line prints it, with
// has_payload_hash in place of the fingerprint, and so do the reports
// (DoctorReport, ReconcileReport, PruneReport, BackupReport, ListPage and
// StorageInfo), so a service can answer with the command line's JSON.
// The examples show each step with its output.
//
// Instants (a Task's times, Event.OccurredAt, the cutoffs of ListFilter
// and PruneOptions) are time.Time values, and spans (a task's Timeout, the
// graces of ReconcileOptions and MetricsOptions) time.Duration values.
// The time of an operation is read from Options.Clock (the wall clock when
// nil) once per operation; inject a clock in tests. The ledger stores
// float seconds (Unix seconds for an instant), as the reference does: a
// Time or Duration is stored as the float nearest to it, and a stored
// float reads back as the nearest Time (in UTC) or Duration, both rounded
// correctly (spec 5.1). A float is coarser than a nanosecond at today's
// dates (2^-22 s apart), so a Time read back is within a quarter of a
// microsecond of the one given, and a cutoff compares as its float. A
// Task's and an Event's JSON write the stored float itself. A negative
// span is ErrInvalidInput. In options, nil asks for the default and a
// pointer to zero for none: new(time.Duration(0)). The Set...Seconds
// methods take the reference's float seconds as they are, for a caller
// (the command line) that holds them.
//
// # Errors
//
// Every refusal wraps exactly one class, matched with errors.Is:
// ErrInvalidInput (a bad argument or an unsafe storage location),
// ErrTaskNotFound, or ErrStateConflict (the task's state forbids the
// operation, the database is busy or damaged, or the clock went backwards).
// ErrBusy, ErrAlreadyTerminal, ErrDeliveryClosed, ErrClockBackwards and
// ErrReadOnly single out the StateConflicts a caller may act on
// differently. ErrClosed (no class) answers every operation after Close;
// Close itself is idempotent. Anything else is an unexpected internal
// failure or a cancelled context. No error message ever
// contains an id, a path or an input value; Reason gives the fixed phrase
// of a refusal for logs and operators.
//
// # Storage boundary
//
// The ledger's directory must belong to the effective user and be writable
// by nobody else (ancestors that others may write to must be sticky); the
// database and its -wal, -shm and -journal files must be regular,
// single-link files, which writable opens keep at mode 0600. A read-only
// open (Options.ReadOnly) creates, migrates, re-permissions and writes
// nothing, so Doctor and dry runs never change what they inspect. Local
// filesystems only.
//
// # Concurrency
//
// A *Ledger is safe for concurrent use by goroutines, but it has one SQLite
// connection and runs its operations one at a time: an operation waits for
// the one before it on the same *Ledger, whatever it is. A Doctor scans the
// whole file, so on a shared *Ledger it holds up every writer for the
// whole scan. Give inspections their own read-only ledger, which reads on
// its own connection, beside the live writers:
//
//	ro, err := ledger.Open(path, ledger.Options{ReadOnly: true})
//	if err != nil { ... }
//	defer ro.Close()
//	report, err := ro.Doctor()
//	preview, err := ro.Reconcile(ledger.ReconcileOptions{DryRun: true})
//
// Several processes (and several *Ledger values) may open the same file:
// each operation is one IMMEDIATE transaction, and a writer waits for
// another up to Options.BusyTimeout (5 s by default) before the operation
// fails with ErrBusy (which is also an ErrStateConflict). Every operation
// has a form taking a context first (CreateContext, CloseTaskContext,
// ReconcileContext, ListAllContext, ...) whose context ends every wait
// early: for the operation before it on the same *Ledger, for another
// connection's lock, and between a read-only read's attempts. The error
// then matches context.Canceled or context.DeadlineExceeded and nothing
// was written. A failed or interrupted operation leaves the database as
// it was.
//
// # Where things are
//
// A map of the package's files for a maintainer:
//
//   - api.go, errors.go, ids.go: the public types, the error classes and
//     the state and reason-code registries.
//   - ledger.go: Open, Close and the connection's life; paths.go: the
//     path forms a command line judges before opening (CheckPath,
//     DatabaseMissing).
//   - tx.go: one transaction on the pinned connection, the busy wait and
//     a context's end; readonly.go: a read-only ledger's reads through the
//     storage guard's view, retried while a writer moves the files.
//   - schema.go: the schema, its fingerprint and the migration from v1.
//   - ops.go: create, start, heartbeat, close and delivery; decide.go: the
//     decision of each of them, a pure function every engine calls;
//     rowcheck.go: the check of every row an operation reads; taskjson.go:
//     a Task's JSON.
//   - server.go: the same operations on a ledger a database server holds
//     (OpenOnServer, through internal/serverstore; impl/ledger/postgres is
//     such a store); server_move.go: backup to and restore from a
//     SQLite file there.
//   - list.go, history.go: listing and a task's events.
//   - reconcile.go: stale work after a restart; metrics.go: its counts
//     without writing.
//   - doctor.go, doctor_scan.go: the read-only check and its one pass
//     over each table.
//   - backup.go, restore.go: the checked copy out and back in.
//   - prune.go, pruneplan.go: removing finished trees in planned batches;
//     prune_server.go: the same on a server.
//   - hooks.go: the seams only this package's tests set.
//
// Beneath it, internal/storageguard keeps the storage boundary (the
// directory and file checks per platform, network file systems, renames
// that never replace, and the read-only view of a database and its -wal);
// internal/ledgererr holds the error classes both share, and
// internal/floatseconds converts between stored float seconds and Times and
// Durations; seconds.go lets the command line hand over float seconds no
// Time or Duration holds.
package ledger
