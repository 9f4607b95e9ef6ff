package ledger

import (
	"context"
	"errors"
	"time"
)

// MetricsOptions are the graces the stuck-work counts of Metrics are
// judged with, read as ReconcileOptions reads them: nil means
// DefaultGrace, new(time.Duration(0)) none, and a negative grace is
// ErrInvalidInput.
type MetricsOptions struct {
	ActiveGrace   *time.Duration
	DeliveryGrace *time.Duration

	// seconds are the command line's graces, in place of the two above.
	seconds *graceSeconds
}

// MetricsReport is what an operator's monitoring scrapes: the doctor's
// report and the stuck work reconcile would settle, all counts.
type MetricsReport struct {
	Doctor DoctorReport
	// StuckKnown is false when a dry-run reconcile at this time would not
	// decide (the schema is not one reads accept, quick_check failed, a
	// row breaks the row rules, or the clock is behind a stored time); the
	// three stuck counts are then zero and mean nothing.
	StuckKnown bool
	// RunningPastDeadline and RunningNotUpdated split the running tasks a
	// dry-run reconcile would time out by its code: deadline_exceeded and
	// restart_stale.
	RunningPastDeadline int
	RunningNotUpdated   int
	// DeliveriesOverdue is the pending deliveries a dry-run reconcile
	// would settle (failed and not_applicable together).
	DeliveriesOverdue int
	// The graces the counts were judged with, to the nearest nanosecond
	// (the longest Duration for the command line's longer ones).
	ActiveGrace, DeliveryGrace time.Duration
}

// Metrics runs the doctor and a dry-run reconcile's decisions in one read
// transaction: the counts describe one snapshot of the ledger, and the
// stuck counts are exactly what ReconcileContext with DryRun at the same
// clock would report (spec/task-state-guard.md §6.13). It writes nothing
// and works on a read-only ledger. A ledger the doctor finds unhealthy is
// reported, not refused: only what would refuse the doctor refuses it.
func (l *Ledger) Metrics(opts MetricsOptions) (MetricsReport, error) {
	return l.MetricsContext(context.Background(), opts)
}

// MetricsContext is Metrics with a context whose cancellation or deadline
// ends the wait for the database (see Concurrency in the package
// documentation).
func (l *Ledger) MetricsContext(ctx context.Context, opts MetricsOptions) (MetricsReport, error) {
	activeGrace, deliveryGrace, err := opts.seconds.resolve(opts.ActiveGrace, opts.DeliveryGrace)
	if err != nil {
		return MetricsReport{}, err
	}
	if l.server != nil {
		return l.serverMetrics(ctx, activeGrace, deliveryGrace)
	}
	var rep MetricsReport
	err = l.lockedReadTx(ctx, "metrics", false, func(t *txn) error {
		rep = MetricsReport{Doctor: runDoctor(t), ActiveGrace: durationOf(activeGrace), DeliveryGrace: durationOf(deliveryGrace)}
		if err := t.ctx.Err(); err != nil {
			return err
		}
		d := rep.Doctor
		if !d.SchemaOK || !d.QuickCheckOK {
			return nil
		}
		// The doctor's reads fixed the snapshot; examine samples the
		// clock after them, as a reconcile does (spec §7.1).
		if err := rep.countStuck(examine(t, activeGrace, deliveryGrace)); err != nil || rep.StuckKnown {
			return err
		}
		// The dry run would refuse: the stuck work stays unknown, unless
		// the context ended meanwhile.
		return t.ctx.Err()
	})
	if err != nil {
		return MetricsReport{}, err
	}
	return rep, nil
}

// countStuck sets rep's stuck counts from a dry-run reconcile's
// examination e (examErr its failure), as that dry run would report them,
// on either engine. What would make the dry run refuse (ErrStateConflict:
// a damaged row, a clock behind a stored time) leaves them unknown and
// answers nil; anything else (the context, the disk) is the answer.
func (rep *MetricsReport) countStuck(e examination, examErr error) error {
	err := examErr
	if err == nil {
		var rr ReconcileReport
		if rr, _, err = planReconcile(e); err == nil {
			rep.StuckKnown = true
			rep.RunningPastDeadline = e.staleDeadline
			rep.RunningNotUpdated = e.stale - e.staleDeadline
			rep.DeliveriesOverdue = rr.DeliveriesFailed + rr.DeliveriesNotApplicable
			return nil
		}
	}
	if errors.Is(err, ErrStateConflict) {
		return nil
	}
	return err
}
