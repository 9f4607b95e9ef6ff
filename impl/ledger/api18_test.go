package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// After Close every operation answers an error that matches ErrClosed, and
// Close itself may be called again: it answers nil and changes nothing.
func TestClosedLedgerAnswersErrClosed(t *testing.T) {
	l, _, _ := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	ops := map[string]func() error{
		"Create":     func() error { _, err := l.CreateContext(ctx, CreateParams{}); return err },
		"Start":      func() error { _, err := l.StartContext(ctx, task.ID); return err },
		"Heartbeat":  func() error { _, err := l.HeartbeatContext(ctx, task.ID); return err },
		"Get":        func() error { _, err := l.GetContext(ctx, task.ID); return err },
		"ChildrenOf": func() error { _, err := l.ChildrenOfContext(ctx, task.ID); return err },
		"Doctor":     func() error { _, err := l.DoctorContext(ctx); return err },
		"Reconcile":  func() error { _, err := l.ReconcileContext(ctx, ReconcileOptions{DryRun: true}); return err },
		"CloseTask": func() error {
			_, err := l.CloseTaskContext(ctx, task.ID, StatusSucceeded, CodeCompleted)
			return err
		},
		"SetDelivery": func() error {
			_, err := l.SetDeliveryContext(ctx, task.ID, DeliveryDelivered, CodeTransportAcknowledged)
			return err
		},
		"List":   func() error { _, err := l.ListContext(ctx, ListFilter{}); return err },
		"Backup": func() error { return l.BackupContext(ctx, filepath.Join(t.TempDir(), "copy.sqlite")) },
		"Prune": func() error {
			before := 2e9
			_, err := l.PruneContext(ctx, PruneOptions{EndedBefore: &before})
			return err
		},
		"Prune dry run": func() error {
			before := 2e9
			_, err := l.PruneContext(ctx, PruneOptions{EndedBefore: &before, DryRun: true})
			return err
		},
	}
	for name, op := range ops {
		if err := op(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if got := Reason(ErrClosed); got != "ledger is closed" {
		t.Errorf("Reason(ErrClosed) = %q", got)
	}
}

// The operations in the command line's argument forms, for the tests
// written against them (float graces with zero meaning zero, a code that
// may be given empty).
func (l *Ledger) reconcileFloat(activeGrace, deliveryGrace float64, dryRun bool) (ReconcileReport, error) {
	return l.reconcileSeconds(context.Background(), activeGrace, deliveryGrace, dryRun)
}

func (l *Ledger) closeTaskCode(id string, status Status, code *string) (Task, error) {
	return l.closeTask(context.Background(), id, status, code)
}

func (l *Ledger) setDeliveryCode(id string, status DeliveryStatus, code *string) (Task, error) {
	return l.setDelivery(context.Background(), id, status, code)
}

// ReconcileOptions' zero value is the command line's reconcile: both graces
// 600 s. Before, Reconcile(0, 0, false) was the legal spelling of "no grace"
// and settled every pending delivery at once; now a zero grace must be
// spelled NoGrace. A grace below zero is refused.
func TestReconcileOptionsZeroValueIsTheCLIDefault(t *testing.T) {
	l, clk, _ := openTest(t)
	ctx := context.Background()
	running, err := l.CreateContext(ctx, CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.StartContext(ctx, running.ID); err != nil {
		t.Fatal(err)
	}
	ended, err := l.CreateContext(ctx, CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.CloseTaskContext(ctx, ended.ID, StatusSucceeded, CodeCompleted); err != nil {
		t.Fatal(err)
	}
	clk.now += 100 // both are 100 s old: inside 600 s, outside no grace

	def, err := l.ReconcileContext(ctx, ReconcileOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := l.reconcileFloat(600, 600, true)
	if err != nil {
		t.Fatal(err)
	}
	if def != cli || def.TasksTimedOut != 0 || def.DeliveriesFailed != 0 {
		t.Fatalf("zero options: %+v, want the 600 s reconcile %+v retaining both", def, cli)
	}
	explicit, err := l.ReconcileContext(ctx, ReconcileOptions{ActiveGrace: DefaultGrace, DeliveryGrace: 10 * time.Minute, DryRun: true})
	if err != nil || explicit != def {
		t.Fatalf("DefaultGrace spelled out: %+v, %v; want %+v", explicit, err, def)
	}
	none, err := l.ReconcileContext(ctx, ReconcileOptions{ActiveGrace: NoGrace, DeliveryGrace: NoGrace, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if zero, _ := l.reconcileFloat(0, 0, true); none != zero || none.TasksTimedOut != 1 || none.DeliveriesFailed != 2 {
		t.Fatalf("NoGrace: %+v, want the zero-grace reconcile %+v (both deliveries settled, the timed-out task's too)", none, zero)
	}
	for _, opts := range []ReconcileOptions{{ActiveGrace: -time.Second}, {DeliveryGrace: -2}} {
		if _, err := l.ReconcileContext(ctx, opts); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%+v: %v, want ErrInvalidInput", opts, err)
		}
	}
	if _, err := l.SetDeliveryContext(ctx, ended.ID, DeliveryDelivered, CodeTransportAcknowledged); err != nil {
		t.Fatal(err)
	}
}

// The typed codes are the registry: each constant is registered for
// exactly the states its comment names, and every registered code has a
// constant.
func TestCodesAreTheRegistry(t *testing.T) {
	all := []Code{CodeCompleted, CodeWorkerCompleted, CodeWorkerFailed, CodeDeadlineExceeded, CodeRestartStale,
		CodeCallerCancelled, CodeTransportAcknowledged, CodeDeliveryGraceExpired, CodeTransportFailed, CodeInternalTask}
	n := 0
	for _, reg := range []map[string][]string{taskCodes, deliveryCodes} {
		for _, codes := range reg {
			for _, c := range codes {
				n++
				if !slices.Contains(all, Code(c)) {
					t.Errorf("registered code %q has no constant", c)
				}
			}
		}
	}
	if n != len(all) {
		t.Errorf("%d registered codes, %d constants", n, len(all))
	}
}
