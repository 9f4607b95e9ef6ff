package ledgercli

import "github.com/stateguard/stateguard/internal/engine/ledgercall"

// The ledger's command-line entry points, which are not its API.
var (
	checkPathText    = ledgercall.CheckPathText
	validPayloadHash = ledgercall.ValidPayloadHash
	databaseMissing  = ledgercall.DatabaseMissing
	closeTask        = ledgercall.CloseTask
	setDelivery      = ledgercall.SetDelivery
	reconcileSeconds = ledgercall.ReconcileSeconds
	metricsSeconds   = ledgercall.MetricsSeconds
)
