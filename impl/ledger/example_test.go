package ledger_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
)

// exampleLedger opens a fresh ledger in a private temporary directory with
// a clock the example moves by hand and predictable task ids, so the
// output is the same on every run. cleanup closes it and removes the
// directory.
func exampleLedger(now *time.Time) (l *ledger.Ledger, path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "ledger-example-")
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	path = filepath.Join(dir, "tasks.sqlite")
	l, err = ledger.Open(path, ledger.Options{
		// On Windows the caller vouches for the directory's ACL (here the
		// user's own temporary folder); elsewhere the option is ignored.
		AllowExternalACL: runtime.GOOS == "windows",
		Clock:            func() time.Time { return *now },
		NewID: func() (string, error) {
			n++
			return fmt.Sprintf("00000000-0000-4000-8000-%012d", n), nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	return l, path, func() { l.Close(); os.RemoveAll(dir) }
}

func printTask(t ledger.Task, err error) {
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s task=%s delivery=%s version=%d\n", t.ID, t.Status, t.DeliveryStatus, t.Version)
}

// A task's life: created, started, closed, then its result delivered.
func Example() {
	now := time.Unix(1_700_000_000, 0)
	l, _, cleanup := exampleLedger(&now)
	defer cleanup()

	t, err := l.Create(ledger.CreateParams{Timeout: new(15 * time.Minute)})
	printTask(t, err)
	now = now.Add(5 * time.Second)
	t, err = l.Start(t.ID)
	printTask(t, err)
	fmt.Println("deadline:", t.DeadlineAt.Format(time.RFC3339))
	now = now.Add(60 * time.Second)
	t, err = l.CloseTask(t.ID, ledger.StatusSucceeded, "completed")
	printTask(t, err)
	now = now.Add(1 * time.Second)
	t, err = l.SetDelivery(t.ID, ledger.DeliveryDelivered, "transport_acknowledged")
	printTask(t, err)

	// The same close again is an idempotent no-op; a different one is refused.
	_, err = l.CloseTask(t.ID, ledger.StatusSucceeded, "completed")
	fmt.Println("repeat:", err)
	_, err = l.CloseTask(t.ID, ledger.StatusFailed, "worker_failed")
	fmt.Println("conflict:", errors.Is(err, ledger.ErrStateConflict), ledger.Reason(err))
	// Output:
	// 00000000-0000-4000-8000-000000000001 task=queued delivery=pending version=0
	// 00000000-0000-4000-8000-000000000001 task=running delivery=pending version=1
	// deadline: 2023-11-14T22:28:25Z
	// 00000000-0000-4000-8000-000000000001 task=succeeded delivery=pending version=2
	// 00000000-0000-4000-8000-000000000001 task=succeeded delivery=delivered version=3
	// repeat: <nil>
	// conflict: true task is already terminal
}

// After a restart, preview what reconciliation would do, then apply it.
// A worker that has not been heard from for longer than the active grace
// is timed out; a delivery pending for longer than the delivery grace fails.
func ExampleLedger_Reconcile() {
	now := time.Unix(1_700_000_000, 0)
	l, _, cleanup := exampleLedger(&now)
	defer cleanup()

	stale, _ := l.Create(ledger.CreateParams{})
	l.Start(stale.ID)
	now = now.Add(1000 * time.Second)
	fresh, _ := l.Create(ledger.CreateParams{})
	l.Start(fresh.ID)

	preview, err := l.Reconcile(ledger.ReconcileOptions{DryRun: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("dry run: examined=%d timed_out=%d retained=%d applied=%v\n",
		preview.ActiveExamined, preview.TasksTimedOut, preview.FreshActiveRetained, preview.Applied)
	rep, err := l.Reconcile(ledger.ReconcileOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("apply:   examined=%d timed_out=%d retained=%d applied=%v\n",
		rep.ActiveExamined, rep.TasksTimedOut, rep.FreshActiveRetained, rep.Applied)
	printTask(l.Get(stale.ID))
	printTask(l.Get(fresh.ID))
	// Output:
	// dry run: examined=2 timed_out=1 retained=1 applied=false
	// apply:   examined=2 timed_out=1 retained=1 applied=true
	// 00000000-0000-4000-8000-000000000001 task=timed_out delivery=pending version=2
	// 00000000-0000-4000-8000-000000000002 task=running delivery=pending version=1
}

// The doctor opens read-only and reports counts, never ids.
func ExampleLedger_Doctor() {
	now := time.Unix(1_700_000_000, 0)
	l, path, cleanup := exampleLedger(&now)
	defer cleanup()
	t, _ := l.Create(ledger.CreateParams{Internal: true})
	l.Start(t.ID)
	l.Create(ledger.CreateParams{})

	ro, err := ledger.Open(path, ledger.Options{AllowExternalACL: runtime.GOOS == "windows", ReadOnly: true, Clock: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	rep, err := ro.Doctor()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("healthy:", rep.Healthy, "tasks:", rep.TaskCount, "events:", rep.EventCount)
	fmt.Println("queued:", rep.TaskStatusCounts[ledger.StatusQueued], "running:", rep.TaskStatusCounts[ledger.StatusRunning])
	fmt.Println("not_applicable:", rep.DeliveryStatusCounts[ledger.DeliveryNotApplicable])
	_, err = ro.Start(t.ID)
	fmt.Println("write on a read-only ledger:", ledger.Reason(err))
	// Output:
	// healthy: true tasks: 2 events: 3
	// queued: 1 running: 1
	// not_applicable: 0
	// write on a read-only ledger: ledger is open read-only
}
