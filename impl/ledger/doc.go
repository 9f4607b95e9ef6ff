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
//	t, err = l.CloseTask(t.ID, ledger.StatusSucceeded, "completed")
//	t, err = l.SetDelivery(t.ID, ledger.DeliveryDelivered, "transport_acknowledged")
//
// The examples show each step with its output. Times are Unix seconds as
// float64, read from Options.Clock (the wall clock when nil) once per
// operation; inject a clock in tests.
//
// # Errors
//
// Every refusal wraps exactly one class, matched with errors.Is:
// ErrInvalidInput (a bad argument or an unsafe storage location),
// ErrTaskNotFound, or ErrStateConflict (the task's state forbids the
// operation, the database is busy or damaged, or the clock went backwards).
// ErrBusy, ErrAlreadyTerminal, ErrDeliveryClosed, ErrClockBackwards and
// ErrReadOnly single out the StateConflicts a caller may act on
// differently. Anything else is an unexpected internal failure or a
// cancelled context. No error message ever
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
// A *Ledger is safe for concurrent use by goroutines: its operations run
// one at a time on one SQLite connection. Several processes may open the
// same file: each operation is one IMMEDIATE transaction, and a writer
// waits for another up to Options.BusyTimeoutMS (5 s by default) before the
// operation fails with ErrBusy (which is also an ErrStateConflict). Every
// operation has a ...Context form (CreateContext, ReconcileContext, ...)
// whose context can end that wait early: the error then matches
// context.Canceled or context.DeadlineExceeded and nothing was written. A
// failed or interrupted operation leaves the database as it was.
package ledger
