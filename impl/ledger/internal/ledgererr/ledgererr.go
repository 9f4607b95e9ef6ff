// Package ledgererr holds the ledger's error classes and the constructors
// of its refusals, shared by package ledger and the storage guard beneath
// it. Package ledger re-exports the classes, so errors.Is on the ledger's
// names matches errors made here.
package ledgererr

import "errors"

// The error classes. Every refusal wraps exactly one of them.
var (
	ErrInvalidInput  = errors.New("InvalidInput")
	ErrTaskNotFound  = errors.New("TaskNotFound")
	ErrStateConflict = errors.New("StateConflict")
)

// ClassError carries one error class and a fixed reason that never names
// an input value, id or path.
type ClassError struct {
	class  error
	reason string
}

func (e *ClassError) Error() string { return e.class.Error() + ": " + e.reason }
func (e *ClassError) Unwrap() error { return e.class }

// Reason is the fixed phrase of the refusal.
func (e *ClassError) Reason() string { return e.reason }

// InvalidInput is a refusal of class ErrInvalidInput.
func InvalidInput(reason string) error { return &ClassError{ErrInvalidInput, reason} }

// TaskNotFound is a refusal of class ErrTaskNotFound.
func TaskNotFound(reason string) error { return &ClassError{ErrTaskNotFound, reason} }

// StateConflict is a refusal of class ErrStateConflict.
func StateConflict(reason string) error { return &ClassError{ErrStateConflict, reason} }

// InternalError is an unexpected failure with no contract class (the CLI's
// InternalError). Its message names only the operation: OS errors carry
// paths, so the cause is reachable through Unwrap but never printed.
type InternalError struct {
	Op    string
	cause error
}

func (e *InternalError) Error() string { return "ledger: " + e.Op + " failed" }
func (e *InternalError) Unwrap() error { return e.cause }

// Internal wraps err as an InternalError of operation op unless it
// already carries a class or is one.
func Internal(op string, err error) error {
	var ce *ClassError
	if errors.As(err, &ce) {
		return err
	}
	var ie *InternalError
	if errors.As(err, &ie) {
		return err
	}
	return &InternalError{Op: op, cause: err}
}

// ErrBusy: another connection held SQLite's write lock (or a read-only
// view's locks) for longer than the busy timeout.
var ErrBusy = StateConflict("database is busy")

// CancelledError is an operation ended by its context before it could
// finish; nothing was written. It matches context.Canceled or
// context.DeadlineExceeded with errors.Is.
type CancelledError struct{ cause error }

func (e *CancelledError) Error() string { return "ledger: cancelled: " + e.cause.Error() }
func (e *CancelledError) Unwrap() error { return e.cause }

// Cancelled wraps a context's error as a CancelledError.
func Cancelled(ctxErr error) error { return &CancelledError{ctxErr} }
