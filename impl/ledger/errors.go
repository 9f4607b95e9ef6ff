package ledger

import (
	"errors"

	"github.com/stateguard/stateguard/impl/ledger/internal/ledgererr"
)

// The refusal constructors and error types live in ledgererr, which the
// storage guard shares; these names keep the package's code short.
type (
	classError     = ledgererr.ClassError
	internalError  = ledgererr.InternalError
	cancelledError = ledgererr.CancelledError
)

func invalidInput(msg string) error  { return ledgererr.InvalidInput(msg) }
func taskNotFound(msg string) error  { return ledgererr.TaskNotFound(msg) }
func stateConflict(msg string) error { return ledgererr.StateConflict(msg) }

func internal(op string, err error) error { return ledgererr.Internal(op, err) }

// cancelled is an operation ended by its context; see ledgererr.CancelledError.
func cancelled(ctxErr error) error { return ledgererr.Cancelled(ctxErr) }

// StateConflict refusals a caller may want to tell apart. Each is matched
// by errors.Is on itself and also on ErrStateConflict, so code written
// against the class keeps working.
var (
	// ErrBusy: another connection held SQLite's write lock for longer than
	// the busy timeout. Retrying later may succeed.
	ErrBusy = ledgererr.ErrBusy
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

// Reason returns the fixed reason carried by an error from this package,
// such as "database directory is group- or world-writable", or "" when err
// carries none. A reason is one of a fixed set of phrases chosen where the
// refusal happens: it never holds an id, a path, an input value or an OS
// error text, so it is safe to log or show to an operator. The README's
// troubleshooting table lists every reason with its cause and remedy.
func Reason(err error) string {
	var ce *classError
	if errors.As(err, &ce) {
		return ce.Reason()
	}
	var ie *internalError
	if errors.As(err, &ie) {
		return ie.Op + " failed"
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
