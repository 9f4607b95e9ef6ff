// Package ledgercall gives this module's command line and tests the
// entry points impl/ledger keeps out of its API (see internal/engine/ledgeraccess)
// with their concrete types. A type that no longer matches panics when the
// package is initialised, so any test that imports it catches the drift.
package ledgercall

import (
	"context"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/engine/ledgeraccess"
)

var (
	// CheckPathText applies Open's rules for the text of a database path
	// (no disk access): non-empty, no NUL, not ":memory:", not a UNC path,
	// and naming a file. A refusal is ledger.ErrInvalidInput.
	CheckPathText = ledgeraccess.CheckPathText
	// ValidPayloadHash reports whether h is a payload fingerprint Create
	// accepts: exactly 64 lowercase hex characters.
	ValidPayloadHash = ledgeraccess.ValidPayloadHash
	// DatabaseMissing reports, creating and changing nothing, whether the
	// database file at path is absent, after Open's path text and platform
	// checks (divergence L1).
	DatabaseMissing = ledgeraccess.DatabaseMissing.(func(path string, opts ledger.Options) (bool, error))
	// CloseTask is Ledger.CloseTaskContext with the command line's --code:
	// nil for none, and a given code checked even when it is empty.
	CloseTask = ledgeraccess.CloseTask.(func(l *ledger.Ledger, ctx context.Context, id string, status ledger.Status, code *string) (ledger.Task, error))
	// SetDelivery is Ledger.SetDeliveryContext with the command line's
	// --code, as CloseTask.
	SetDelivery = ledgeraccess.SetDelivery.(func(l *ledger.Ledger, ctx context.Context, id string, status ledger.DeliveryStatus, code *string) (ledger.Task, error))
	// ReconcileSeconds is Ledger.ReconcileContext with the command line's
	// graces: finite, non-negative float seconds of any size, zero meaning
	// zero.
	ReconcileSeconds = ledgeraccess.ReconcileSeconds.(func(l *ledger.Ledger, ctx context.Context, activeGrace, deliveryGrace float64, dryRun bool) (ledger.ReconcileReport, error))
	// MetricsSeconds is Ledger.MetricsContext with the command line's
	// graces, as ReconcileSeconds.
	MetricsSeconds = ledgeraccess.MetricsSeconds.(func(l *ledger.Ledger, ctx context.Context, activeGrace, deliveryGrace float64) (ledger.MetricsReport, error))
)
