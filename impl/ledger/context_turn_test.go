package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"
)

// contextCalls calls every method of *Ledger that takes a context first,
// with arguments it would otherwise accept. TestEveryContextMethodIsCalled
// keeps the table whole.
func contextCalls(l *Ledger, dir, id string) map[string]func(context.Context) error {
	cutoff := time.Unix(2000, 0)
	return map[string]func(context.Context) error{
		"BackupContext": func(ctx context.Context) error {
			_, err := l.BackupContext(ctx, filepath.Join(dir, "copy.sqlite"))
			return err
		},
		"ChildrenOfContext": func(ctx context.Context) error { _, err := l.ChildrenOfContext(ctx, id); return err },
		"CloseTaskContext": func(ctx context.Context) error {
			_, err := l.CloseTaskContext(ctx, id, StatusSucceeded, NoCode)
			return err
		},
		"CloseTaskOptionalCode": func(ctx context.Context) error {
			_, err := l.CloseTaskOptionalCode(ctx, id, StatusSucceeded, nil)
			return err
		},
		"CreateContext":  func(ctx context.Context) error { _, err := l.CreateContext(ctx, CreateParams{}); return err },
		"DoctorContext":  func(ctx context.Context) error { _, err := l.DoctorContext(ctx); return err },
		"GetContext":     func(ctx context.Context) error { _, err := l.GetContext(ctx, id); return err },
		"HistoryContext": func(ctx context.Context) error { _, err := l.HistoryContext(ctx, id); return err },
		"HeartbeatContext": func(ctx context.Context) error {
			_, err := l.HeartbeatContext(ctx, id)
			return err
		},
		"ListAllContext": func(ctx context.Context) error {
			for _, err := range l.ListAllContext(ctx, ListFilter{}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"ListContext": func(ctx context.Context) error { _, err := l.ListContext(ctx, ListFilter{}); return err },
		"MetricsContext": func(ctx context.Context) error {
			_, err := l.MetricsContext(ctx, MetricsOptions{})
			return err
		},
		"PruneContext": func(ctx context.Context) error {
			_, err := l.PruneContext(ctx, PruneOptions{EndedBefore: cutoff})
			return err
		},
		"ReconcileContext": func(ctx context.Context) error {
			_, err := l.ReconcileContext(ctx, ReconcileOptions{})
			return err
		},
		"SetDeliveryContext": func(ctx context.Context) error {
			_, err := l.SetDeliveryContext(ctx, id, DeliveryDelivered, NoCode)
			return err
		},
		"SetDeliveryOptionalCode": func(ctx context.Context) error {
			_, err := l.SetDeliveryOptionalCode(ctx, id, DeliveryDelivered, nil)
			return err
		},
		"StartContext": func(ctx context.Context) error { _, err := l.StartContext(ctx, id); return err },
	}
}

// TestEveryContextMethodIsCalled: the table of contextCalls names every
// method of *Ledger whose first parameter is a context, so a new one
// cannot miss the test of its wait.
func TestEveryContextMethodIsCalled(t *testing.T) {
	calls := contextCalls(nil, "", "")
	ctxType := reflect.TypeFor[context.Context]()
	typ := reflect.TypeFor[*Ledger]()
	var missing []string
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		if m.Type.NumIn() > 1 && m.Type.In(1) == ctxType {
			if _, ok := calls[m.Name]; !ok {
				missing = append(missing, m.Name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("methods taking a context without a row in contextCalls: %v", missing)
	}
}

// TestContextEndsTheWaitForTheTurn: an operation that waits behind
// another on the same *Ledger (a Doctor held inside its scan by a hook,
// for as long as the test likes) returns when its context ends, with the
// context's error, and the ledger is usable afterwards. Every method that
// takes a context is tried. An operation that ignored its context would
// wait until the Doctor is let go, which happens only after every call
// has been judged.
func TestContextEndsTheWaitForTheTurn(t *testing.T) {
	l, _, p := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	letGo := make(chan struct{})
	inScan := make(chan struct{})
	var once sync.Once
	hooks.doctorQueryFault = func(string) error {
		once.Do(func() {
			close(inScan)
			<-letGo
		})
		return nil
	}
	waiting := make(chan struct{}, 1)
	hooks.waitingForTurn = func() { waiting <- struct{}{} }
	t.Cleanup(func() { hooks.doctorQueryFault, hooks.waitingForTurn = nil, nil })

	doctorDone := make(chan error, 1)
	go func() { _, err := l.Doctor(); doctorDone <- err }()
	<-inScan

	calls := contextCalls(l, filepath.Dir(p), task.ID)
	names := make([]string, 0, len(calls))
	for name := range calls {
		names = append(names, name)
	}
	sort.Strings(names)
	var slowest time.Duration
	for _, name := range names {
		ctx, cancel := context.WithCancel(context.Background())
		answer := make(chan error, 1)
		go func() { answer <- calls[name](ctx) }()
		select {
		case <-waiting:
		case err := <-answer:
			cancel()
			t.Fatalf("%s answered beside a running Doctor without waiting: %v", name, err)
		}
		cancel()
		ended := time.Now()
		select {
		case err := <-answer:
			if took := time.Since(ended); took > slowest {
				slowest = took
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", name, err)
			}
		case <-time.After(10 * time.Second):
			close(letGo)
			t.Fatalf("%s still waits for its turn 10 s after its context ended", name)
		}
	}
	t.Logf("slowest answer after the context ended: %v", slowest)
	close(letGo)
	if err := <-doctorDone; err != nil {
		t.Fatal(err)
	}
	// Nothing the cancelled calls started was written.
	if got, err := l.Get(task.ID); err != nil || got.Status != StatusQueued || got.Version != task.Version {
		t.Fatalf("after the cancelled calls: %+v %v", got, err)
	}
	healthy(t, l)
}
