// Package ledgerseconds hands package ledger spans as the reference
// task-state-guard takes them, float seconds of any finite, non-negative
// size, where ledger's Go API takes a time.Duration. The command line
// reads a timeout of 1e16 s or a grace of 1e300 s, which no Duration
// holds, and must decide and store exactly what it read; a Go program has
// the Duration fields. Package ledger installs the setters when it is
// initialised; each takes a pointer to one of ledger's option types and
// panics on any other. Only this module can import the package.
package ledgerseconds

var (
	// SetTimeout gives a *ledger.CreateParams its timeout in seconds,
	// in place of its Timeout field.
	SetTimeout func(params any, seconds float64)
	// SetGraces gives a *ledger.ReconcileOptions or *ledger.MetricsOptions
	// its two graces in seconds, zero meaning zero, in place of its
	// Duration fields.
	SetGraces func(opts any, active, delivery float64)
)
