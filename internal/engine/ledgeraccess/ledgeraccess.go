// Package ledgeraccess hands the task-state-guard command line the few
// entry points of impl/ledger that serve the command line only and are not
// part of the Go API: checks of its argument text, the missing-ledger test
// of divergence L1, and the operations in the command line's own argument
// forms (graces as float seconds of any size, a --code that may be given
// empty). impl/ledger fills the variables when it is initialised;
// internal/engine/ledgercall gives them their concrete types to the command line
// and the tests. Nothing outside this module can import either, so the
// public surface stays the API.
package ledgeraccess

// The entry points, set by impl/ledger's init. The ones typed any hold
// functions over impl/ledger's own types, which this package cannot name
// without an import cycle; their types are in the comments.
var (
	// CheckPathText applies Open's rules for the text of a database path
	// (no disk access); a refusal is ledger.ErrInvalidInput.
	CheckPathText func(path string) error
	// ValidPayloadHash reports whether h is 64 lowercase hex characters.
	ValidPayloadHash func(h string) bool
	// DatabaseMissing: func(path string, opts ledger.Options) (bool, error).
	DatabaseMissing any
	// CloseTask: func(l *ledger.Ledger, ctx context.Context, id string,
	// status ledger.Status, code *string) (ledger.Task, error).
	CloseTask any
	// SetDelivery: func(l *ledger.Ledger, ctx context.Context, id string,
	// status ledger.DeliveryStatus, code *string) (ledger.Task, error).
	SetDelivery any
	// ReconcileSeconds: func(l *ledger.Ledger, ctx context.Context,
	// activeGrace, deliveryGrace float64, dryRun bool)
	// (ledger.ReconcileReport, error).
	ReconcileSeconds any
	// MetricsSeconds: func(l *ledger.Ledger, ctx context.Context,
	// activeGrace, deliveryGrace float64) (ledger.MetricsReport, error).
	MetricsSeconds any
)
