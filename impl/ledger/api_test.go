package ledger

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// After Close every operation answers an error that matches ErrClosed, on
// a writable ledger and on a read-only one alike (a read-only ledger's own
// refusal of a mutation must not answer first), and Close itself may be
// called again: it answers nil and changes nothing. Every exported method
// that can answer an error is in the table.
func TestClosedLedgerAnswersErrClosed(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		name := "writable"
		if readOnly {
			name = "read-only"
		}
		t.Run(name, func(t *testing.T) { closedLedgerAnswersErrClosed(t, readOnly) })
	}
	if got := Reason(ErrClosed); got != "ledger is closed" {
		t.Errorf("Reason(ErrClosed) = %q", got)
	}
}

func closedLedgerAnswersErrClosed(t *testing.T, readOnly bool) {
	l, _, p := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if readOnly {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if l, err = Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	before := time.Unix(2e9, 0)
	prune := PruneOptions{EndedBefore: before}
	pruneDry := PruneOptions{EndedBefore: before, DryRun: true}
	backupTarget := func() string { return filepath.Join(t.TempDir(), "copy.sqlite") }
	listAll := func() error {
		for _, err := range l.ListAll(ListFilter{}) {
			return err
		}
		return errors.New("ListAll yielded nothing")
	}
	listAllContext := func() error {
		for _, err := range l.ListAllContext(ctx, ListFilter{}) {
			return err
		}
		return errors.New("ListAll yielded nothing")
	}
	// Keyed by method name; a word after a space names a variant.
	ops := map[string]func() error{
		"Create":        func() error { _, err := l.Create(CreateParams{}); return err },
		"CreateContext": func() error { _, err := l.CreateContext(ctx, CreateParams{}); return err },
		"Start":         func() error { _, err := l.Start(task.ID); return err },
		"StartContext":  func() error { _, err := l.StartContext(ctx, task.ID); return err },
		"Heartbeat":     func() error { _, err := l.Heartbeat(task.ID); return err },
		"HeartbeatContext": func() error {
			_, err := l.HeartbeatContext(ctx, task.ID)
			return err
		},
		"CloseTask": func() error { _, err := l.CloseTask(task.ID, StatusSucceeded, CodeCompleted); return err },
		"CloseTaskContext": func() error {
			_, err := l.CloseTaskContext(ctx, task.ID, StatusSucceeded, CodeCompleted)
			return err
		},
		"CloseTaskOptionalCode": func() error {
			_, err := l.CloseTaskOptionalCode(ctx, task.ID, StatusSucceeded, nil)
			return err
		},
		"SetDeliveryOptionalCode": func() error {
			_, err := l.SetDeliveryOptionalCode(ctx, task.ID, DeliveryDelivered, nil)
			return err
		},
		"SetDelivery": func() error {
			_, err := l.SetDelivery(task.ID, DeliveryDelivered, CodeTransportAcknowledged)
			return err
		},
		"SetDeliveryContext": func() error {
			_, err := l.SetDeliveryContext(ctx, task.ID, DeliveryDelivered, CodeTransportAcknowledged)
			return err
		},
		"Get":               func() error { _, err := l.Get(task.ID); return err },
		"GetContext":        func() error { _, err := l.GetContext(ctx, task.ID); return err },
		"ChildrenOf":        func() error { _, err := l.ChildrenOf(task.ID); return err },
		"ChildrenOfContext": func() error { _, err := l.ChildrenOfContext(ctx, task.ID); return err },
		"History":           func() error { _, err := l.History(task.ID); return err },
		"HistoryContext":    func() error { _, err := l.HistoryContext(ctx, task.ID); return err },
		"Metrics":           func() error { _, err := l.Metrics(MetricsOptions{}); return err },
		"MetricsContext":    func() error { _, err := l.MetricsContext(ctx, MetricsOptions{}); return err },
		"Doctor":            func() error { _, err := l.Doctor(); return err },
		"DoctorContext":     func() error { _, err := l.DoctorContext(ctx); return err },
		"Reconcile":         func() error { _, err := l.Reconcile(ReconcileOptions{}); return err },
		"Reconcile dry run": func() error { _, err := l.Reconcile(ReconcileOptions{DryRun: true}); return err },
		"ReconcileContext":  func() error { _, err := l.ReconcileContext(ctx, ReconcileOptions{}); return err },
		"ReconcileContext dry run": func() error {
			_, err := l.ReconcileContext(ctx, ReconcileOptions{DryRun: true})
			return err
		},
		"List":                 func() error { _, err := l.List(ListFilter{}); return err },
		"ListContext":          func() error { _, err := l.ListContext(ctx, ListFilter{}); return err },
		"ListAll":              listAll,
		"ListAllContext":       listAllContext,
		"Backup":               func() error { _, err := l.Backup(backupTarget()); return err },
		"BackupContext":        func() error { _, err := l.BackupContext(ctx, backupTarget()); return err },
		"Prune":                func() error { _, err := l.Prune(prune); return err },
		"Prune dry run":        func() error { _, err := l.Prune(pruneDry); return err },
		"PruneContext":         func() error { _, err := l.PruneContext(ctx, prune); return err },
		"PruneContext dry run": func() error { _, err := l.PruneContext(ctx, pruneDry); return err },
	}
	covered := map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(ops)) {
		covered[strings.Fields(key)[0]] = true
		if err := ops[key](); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", key, err)
		}
	}
	errType := reflect.TypeFor[error]()
	lt := reflect.TypeOf(l)
	for i := range lt.NumMethod() {
		m := lt.Method(i)
		answersError := false
		for j := range m.Type.NumOut() {
			out := m.Type.Out(j)
			answersError = answersError || out == errType || strings.Contains(out.String(), "error]")
		}
		if answersError && m.Name != "Close" && !covered[m.Name] {
			t.Errorf("method %s answers an error but is not in the table", m.Name)
		}
	}
}

// Short forms of the operations in the reference's argument forms, for the
// tests written against them (float graces with zero meaning zero, a code
// that may be given empty).
func (l *Ledger) reconcileFloat(activeGrace, deliveryGrace float64, dryRun bool) (ReconcileReport, error) {
	return l.reconcileSeconds(context.Background(), activeGrace, deliveryGrace, dryRun)
}

// reconcileSeconds and metricsSeconds take float graces as the command
// line hands them over.
func (l *Ledger) reconcileSeconds(ctx context.Context, activeGrace, deliveryGrace float64, dryRun bool) (ReconcileReport, error) {
	opts := ReconcileOptions{DryRun: dryRun}
	opts.SetGraceSeconds(activeGrace, deliveryGrace)
	return l.ReconcileContext(ctx, opts)
}

func (l *Ledger) metricsSeconds(ctx context.Context, activeGrace, deliveryGrace float64) (MetricsReport, error) {
	var opts MetricsOptions
	opts.SetGraceSeconds(activeGrace, deliveryGrace)
	return l.MetricsContext(ctx, opts)
}

// timeoutSeconds is p with a timeout of float seconds, as the command line
// hands it over.
func timeoutSeconds(p CreateParams, seconds float64) CreateParams {
	p.SetTimeoutSeconds(seconds)
	return p
}

// storedTimeout is a task's timeout as stored.
func storedTimeout(t Task) *float64 {
	if t.stored == nil {
		return nil
	}
	return t.stored.TimeoutSeconds
}

func (l *Ledger) closeTaskCode(id string, status Status, code *string) (Task, error) {
	return l.CloseTaskOptionalCode(context.Background(), id, status, code)
}

func (l *Ledger) setDeliveryCode(id string, status DeliveryStatus, code *string) (Task, error) {
	return l.SetDeliveryOptionalCode(context.Background(), id, status, code)
}

// ReconcileOptions' zero value is the command line's reconcile: both graces
// 600 s. Before, Reconcile(0, 0, false) was the legal spelling of "no grace"
// and settled every pending delivery at once; now a zero grace must be
// spelled as a pointer to zero. A grace below zero is refused.
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
	explicit, err := l.ReconcileContext(ctx, ReconcileOptions{ActiveGrace: new(DefaultGrace), DeliveryGrace: new(10 * time.Minute), DryRun: true})
	if err != nil || explicit != def {
		t.Fatalf("DefaultGrace spelled out: %+v, %v; want %+v", explicit, err, def)
	}
	none, err := l.ReconcileContext(ctx, ReconcileOptions{ActiveGrace: new(time.Duration(0)), DeliveryGrace: new(time.Duration(0)), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if zero, _ := l.reconcileFloat(0, 0, true); none != zero || none.TasksTimedOut != 1 || none.DeliveriesFailed != 2 {
		t.Fatalf("no grace: %+v, want the zero-grace reconcile %+v (both deliveries settled, the timed-out task's too)", none, zero)
	}
	for _, opts := range []ReconcileOptions{{ActiveGrace: new(-time.Second)}, {DeliveryGrace: new(time.Duration(-2))}} {
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

// Options.BusyTimeout reaches SQLite in whole milliseconds, rounded up
// (no wait shorter than asked); zero is 5 s and a negative one is refused.
func TestBusyTimeoutInWholeMilliseconds(t *testing.T) {
	for _, c := range []struct {
		given time.Duration
		ms    int
	}{{0, 5000}, {time.Nanosecond, 1}, {1500 * time.Microsecond, 2}, {20 * time.Millisecond, 20}, {1<<63 - 1, 1<<31 - 1}} {
		p := filepath.Join(privateDir(t), "ledger.sqlite")
		l, err := Open(p, Options{AllowExternalACL: onWindows, BusyTimeout: c.given})
		if err != nil {
			t.Fatal(err)
		}
		if got := l.StorageInfo().BusyTimeoutMS; got != c.ms {
			t.Errorf("BusyTimeout %v: busy_timeout %d ms, want %d", c.given, got, c.ms)
		}
		l.Close()
	}
	_, err := Open(filepath.Join(privateDir(t), "ledger.sqlite"), Options{AllowExternalACL: onWindows, BusyTimeout: -time.Nanosecond})
	wantClass(t, err, ErrInvalidInput)
}
