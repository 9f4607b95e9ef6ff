package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestDoctorContextDeadlineIsAnError: a DoctorContext whose deadline
// passes while the doctor reads answers the deadline (the package
// documentation: the error matches context.DeadlineExceeded), never a
// report. The doctor counts a failed check query instead of returning it,
// so the statements SQLite's interrupt ended turned into a report of a
// damaged ledger (quick_check "failed", doctor errors, or the early
// return's schema_ok false) on a healthy one, with a nil error. Deadlines
// from 1 ms up are tried until one lands inside the read.
func TestDoctorContextDeadlineIsAnError(t *testing.T) {
	p := filepath.Join(privateDir(t), "tasks.sqlite")
	if err := seedBenchmark(p, 5000, 1e9); err != nil {
		t.Fatal(err)
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if rep, err := l.Doctor(); err != nil || !rep.Healthy {
		t.Fatalf("seeded ledger: %+v %v", rep, err)
	}
	landed := 0
	for d := time.Millisecond; d <= time.Second && landed < 3; d += d / 2 {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		rep, err := l.DoctorContext(ctx)
		expired := ctx.Err() != nil
		cancel()
		switch {
		case err == nil && !rep.Healthy:
			t.Fatalf("deadline %v: a report of a damaged ledger with no error (expired %v): %+v", d, expired, rep)
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("deadline %v: %v, want DeadlineExceeded", d, err)
		case err != nil:
			landed++
		}
	}
	if rep, err := l.Doctor(); err != nil || !rep.Healthy {
		t.Fatalf("after the deadlines: %+v %v", rep, err)
	}
}
