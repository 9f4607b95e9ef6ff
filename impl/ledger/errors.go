package ledger

import "errors"

// classError carries one error class and a fixed message that never names
// an input value, id or path.
type classError struct {
	class error
	msg   string
}

func (e *classError) Error() string { return e.class.Error() + ": " + e.msg }
func (e *classError) Unwrap() error { return e.class }

func invalidInput(msg string) error  { return &classError{ErrInvalidInput, msg} }
func taskNotFound(msg string) error  { return &classError{ErrTaskNotFound, msg} }
func stateConflict(msg string) error { return &classError{ErrStateConflict, msg} }

// StateConflict refusals a caller may want to tell apart. Each is matched
// by errors.Is on itself and also on ErrStateConflict, so code written
// against the class keeps working.
var (
	// ErrBusy: another connection held SQLite's write lock for longer than
	// the busy timeout. Retrying later may succeed.
	ErrBusy = stateConflict("database is busy")
	// ErrAlreadyTerminal: CloseTask on a task already closed with another
	// status. The first close stands; retrying cannot succeed.
	ErrAlreadyTerminal = stateConflict("task is already terminal")
	// ErrDeliveryClosed: SetDelivery on a delivery already settled with
	// another state. The first outcome stands.
	ErrDeliveryClosed = stateConflict("delivery is already closed")
	// ErrClockBackwards: the clock reads earlier than a time stored on the
	// task the operation depends on. Nothing was written.
	ErrClockBackwards = stateConflict("clock moved backwards")
	// ErrReadOnly: a mutation on a ledger opened with Options.ReadOnly.
	ErrReadOnly = stateConflict("ledger is open read-only")
)

var (
	errClockBackwards = ErrClockBackwards
	errReadOnly       = ErrReadOnly
)

// ErrClosed is returned by every operation on a Ledger after Close, as
// os.ErrClosed is by an *os.File's; it carries no error class. Close itself
// may be called again and then answers nil.
var ErrClosed = errors.New("ledger: closed")

// internalError is an unexpected failure with no contract class (the CLI's
// InternalError). Its message names only the operation: OS errors carry
// paths, so the cause is reachable through Unwrap but never printed.
type internalError struct {
	op    string
	cause error
}

func (e *internalError) Error() string { return "ledger: " + e.op + " failed" }
func (e *internalError) Unwrap() error { return e.cause }

// internal wraps err as an internalError unless it already carries a class.
func internal(op string, err error) error {
	var ce *classError
	if errors.As(err, &ce) {
		return err
	}
	var ie *internalError
	if errors.As(err, &ie) {
		return err
	}
	return &internalError{op: op, cause: err}
}

// cancelledError is an operation ended by its context (the ...Context
// methods) before it could finish; nothing was written. It matches
// context.Canceled or context.DeadlineExceeded with errors.Is.
type cancelledError struct{ cause error }

func (e *cancelledError) Error() string { return "ledger: cancelled: " + e.cause.Error() }
func (e *cancelledError) Unwrap() error { return e.cause }

// Reason returns the fixed reason carried by an error from this package,
// such as "database directory is group- or world-writable", or "" when err
// carries none. A reason is one of a fixed set of phrases chosen where the
// refusal happens: it never holds an id, a path, an input value or an OS
// error text, so it is safe to log or show to an operator. The README's
// troubleshooting table lists every reason with its cause and remedy.
func Reason(err error) string {
	var ce *classError
	if errors.As(err, &ce) {
		return ce.msg
	}
	var ie *internalError
	if errors.As(err, &ie) {
		return ie.op + " failed"
	}
	if errors.Is(err, ErrClosed) {
		return "ledger is closed"
	}
	var ce2 *cancelledError
	if errors.As(err, &ce2) {
		return "cancelled by the caller's context"
	}
	return ""
}
