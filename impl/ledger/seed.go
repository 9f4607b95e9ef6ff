package ledger

import (
	"context"
	"fmt"
	"runtime"

	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
)

// seedBenchmark creates a ledger at path holding the benchmark workload,
// for benchmarks and tests only: n tasks, of which 30% are queued, 30% are
// running and stale (half of them, every other running task, with a 900 s
// timeout whose deadline has passed), and 40% are terminal with a pending
// delivery (half of them internal). Every time lies between now-100000 and now-90000, so with
// graces of 600 s a reconcile at now times out every running task and
// closes every pending delivery that was terminal before.
//
// The rows and events are exactly what Create, Start and CloseTask would
// write at those times (the doctor finds the file healthy), but they are
// inserted in one write transaction, because seeding 100,000 tasks one
// operation at a time would take minutes.
func seedBenchmark(path string, n int, now float64) error {
	// The seed goes to a fresh file of a test's or benchmark's own
	// directory; on Windows its caller vouches for that directory's ACL.
	l, err := Open(path, Options{AllowExternalACL: runtime.GOOS == "windows", Clock: func() float64 { return now }})
	if err != nil {
		return err
	}
	defer l.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.write(context.Background(), func(t *txn) error {
		base := now - 100000
		// Tasks are created 0.05 s apart, closer above 200,000 tasks so
		// that every creation stays within the first 10,000 s.
		step := 0.05
		if n > 200000 {
			step = 10000 / float64(n)
		}
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
			created := base + float64(i)*step
			var (
				status            = string(StatusQueued)
				required          = 1
				started, deadline any
				ended, code       any
				timeout           any
				updated           = created
				version           = 0
			)
			switch i % 10 {
			case 3, 4, 5:
				status = string(StatusRunning)
				s := created + 1
				started, updated, version = s, s, 1
				// Every other running task (counted among the running
				// ones, not by i, which would give a third) has a timeout.
				if running := i/10*3 + i%10 - 3; running%2 == 0 {
					timeout, deadline = 900.0, s+900
				}
			case 6, 7, 8, 9:
				status = string(StatusSucceeded)
				s, e := created+1, created+2
				started, ended, updated, code, version = s, e, e, "completed", 2
				if i%2 == 1 {
					required = 0
				}
			}
			if _, err := t.ExecContext(t.ctx, `INSERT INTO tasks (id, parent_id, status, delivery_status, delivery_required, payload_hash,
				timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version)
				VALUES (?, NULL, ?, 'pending', ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
				id, status, required, timeout, created, started, updated, ended, deadline, created, code, version); err != nil {
				return err
			}
			if err := addEvent(t, id, eventCreated, nil, string(StatusQueued), created, codeCreated); err != nil {
				return err
			}
			if started != nil {
				if err := addEvent(t, id, eventTaskTransition, string(StatusQueued), string(StatusRunning), started.(float64), codeStarted); err != nil {
					return err
				}
			}
			if ended != nil {
				if err := addEvent(t, id, eventTaskTransition, string(StatusRunning), status, ended.(float64), code); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// The benchmarks and tools reach the seeding through internal/testsupport/benchseed,
// so it stays out of the public API.
func init() { benchseed.Seed = seedBenchmark }
