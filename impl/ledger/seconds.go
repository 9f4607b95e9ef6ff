package ledger

import "github.com/stateguard/stateguard/internal/engine/ledgerseconds"

// The command line's way to hand over float seconds no Duration holds.
func init() {
	ledgerseconds.SetTimeout = func(params any, seconds float64) {
		params.(*CreateParams).timeoutSeconds = &seconds
	}
	ledgerseconds.SetGraces = func(opts any, active, delivery float64) {
		g := &graceSeconds{active, delivery}
		switch o := opts.(type) {
		case *ReconcileOptions:
			o.seconds = g
		case *MetricsOptions:
			o.seconds = g
		default:
			panic("ledgerseconds.SetGraces: not a *ReconcileOptions or *MetricsOptions")
		}
	}
}
