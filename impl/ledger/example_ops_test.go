package ledger_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"runtime"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
)

// printJSON prints a report as the command line would.
func printJSON(v any, err error) {
	if err != nil {
		log.Fatal(err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(js))
}

// List returns a page of the tasks that match a filter, in id order, and
// the position of the next page; ListAll walks every page.
func ExampleLedger_List() {
	now := time.Unix(1_700_000_000, 0)
	l, _, cleanup := exampleLedger(&now)
	defer cleanup()
	for range 5 {
		t, _ := l.Create(ledger.CreateParams{})
		if t.ID[len(t.ID)-1]%2 == 0 {
			l.Start(t.ID)
		}
	}

	page, err := l.List(ledger.ListFilter{Statuses: []ledger.Status{ledger.StatusQueued}, Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range page.Tasks {
		fmt.Println(t.ID, t.Status)
	}
	fmt.Println("next:", page.Next)
	page, _ = l.List(ledger.ListFilter{Statuses: []ledger.Status{ledger.StatusQueued}, Limit: 2, After: page.Next})
	fmt.Println("last page:", len(page.Tasks), "task, next:", page.Next == "")
	// Output:
	// 00000000-0000-4000-8000-000000000001 queued
	// 00000000-0000-4000-8000-000000000003 queued
	// next: 00000000-0000-4000-8000-000000000003
	// last page: 1 task, next: true
}

// ListAll streams every matching task, a page at a time, each page its
// own read transaction; the first error ends the walk.
func ExampleLedger_ListAll() {
	now := time.Unix(1_700_000_000, 0)
	l, _, cleanup := exampleLedger(&now)
	defer cleanup()
	for range 3 {
		t, _ := l.Create(ledger.CreateParams{})
		l.Start(t.ID)
	}

	for t, err := range l.ListAll(ledger.ListFilter{Statuses: []ledger.Status{ledger.StatusRunning}, Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.ID, t.Status)
	}
	// Output:
	// 00000000-0000-4000-8000-000000000001 running
	// 00000000-0000-4000-8000-000000000002 running
	// 00000000-0000-4000-8000-000000000003 running
}

// Backup writes a checked copy beside the live ledger; the copy is a
// ledger of its own.
func ExampleLedger_Backup() {
	now := time.Unix(1_700_000_000, 0)
	l, path, cleanup := exampleLedger(&now)
	defer cleanup()
	l.Create(ledger.CreateParams{})
	l.Create(ledger.CreateParams{Internal: true})

	target := filepath.Join(filepath.Dir(path), "nightly.sqlite")
	rep, err := l.Backup(target)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tasks:", rep.TaskCount, "events:", rep.EventCount)

	copied, err := ledger.Open(target, ledger.Options{AllowExternalACL: runtime.GOOS == "windows", ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer copied.Close()
	doctor, err := copied.Doctor()
	fmt.Println("copy healthy:", doctor.Healthy, err)

	// A backup never overwrites a file.
	_, err = l.Backup(target)
	fmt.Println("again:", ledger.Reason(err))
	// Output:
	// tasks: 2 events: 2
	// copy healthy: true <nil>
	// again: backup target already exists
}

// Prune removes the task trees that are finished with before a cutoff;
// a dry run reports the same counts and removes nothing. The reports
// marshal as task-state-guard prints them.
func ExampleLedger_Prune() {
	now := time.Unix(1_700_000_000, 0)
	l, _, cleanup := exampleLedger(&now)
	defer cleanup()
	done, _ := l.Create(ledger.CreateParams{})
	l.CloseTask(done.ID, ledger.StatusSucceeded, ledger.CodeCompleted)
	l.SetDelivery(done.ID, ledger.DeliveryDelivered, ledger.CodeTransportAcknowledged)
	undelivered, _ := l.Create(ledger.CreateParams{})
	l.CloseTask(undelivered.ID, ledger.StatusFailed, ledger.CodeWorkerFailed)

	cutoff := now.Add(time.Second)
	printJSON(l.Prune(ledger.PruneOptions{EndedBefore: cutoff, DryRun: true}))
	printJSON(l.Prune(ledger.PruneOptions{EndedBefore: cutoff}))
	_, err := l.Get(done.ID)
	fmt.Println("pruned task:", errors.Is(err, ledger.ErrTaskNotFound))
	// Output:
	// {"applied":false,"dry_run":true,"events_removed":3,"tasks_removed":1,"trees_examined":1,"trees_removed":1,"trees_retained":0}
	// {"applied":true,"dry_run":false,"events_removed":3,"tasks_removed":1,"trees_examined":1,"trees_removed":1,"trees_retained":0}
	// pruned task: true
}

// ErrBusy means another connection held the write lock for longer than
// the busy timeout; nothing was written, and the same call may simply be
// made again later. Here another program's transaction holds the lock
// until the first retry.
func Example_retryBusy() {
	now := time.Unix(1_700_000_000, 0)
	_, path, cleanup := exampleLedger(&now)
	defer cleanup()
	// A short busy timeout, so that a held lock answers ErrBusy soon.
	l, err := ledger.Open(path, ledger.Options{AllowExternalACL: runtime.GOOS == "windows", BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	other, err := sql.Open("sqlite", path)
	if err != nil {
		log.Fatal(err)
	}
	defer other.Close()
	otherTx, err := other.Conn(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer otherTx.Close()
	if _, err := otherTx.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		log.Fatal(err)
	}
	otherCommits := func() { otherTx.ExecContext(context.Background(), "COMMIT") }

	var task ledger.Task
	for attempt := 1; attempt <= 5; attempt++ {
		task, err = l.CreateContext(context.Background(), ledger.CreateParams{})
		if !errors.Is(err, ledger.ErrBusy) {
			break
		}
		fmt.Printf("attempt %d: %s; retrying\n", attempt, ledger.Reason(err))
		otherCommits() // a real caller sleeps here, longer each time
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", task.Status)
	// Output:
	// attempt 1: database is busy; retrying
	// created: queued
}

// A worker's start-up: open the ledger, preview what reconciliation would
// settle after the restart, log it, then apply it before taking new work.
// The task that was timed out just now keeps its delivery pending for the
// delivery grace.
func Example_workerStartUp() {
	now := time.Unix(1_700_000_000, 0)
	l, _, cleanup := exampleLedger(&now)
	defer cleanup()
	crashed, _ := l.Create(ledger.CreateParams{}) // running when the last run died
	l.Start(crashed.ID)
	finished, _ := l.Create(ledger.CreateParams{}) // ended, never delivered
	l.CloseTask(finished.ID, ledger.StatusSucceeded, ledger.CodeCompleted)
	now = now.Add(3600 * time.Second) // the worker comes back an hour later

	preview, err := l.Reconcile(ledger.ReconcileOptions{DryRun: true})
	printJSON(preview, err)
	applied, err := l.Reconcile(ledger.ReconcileOptions{})
	printJSON(applied, err)
	printTask(l.Get(crashed.ID))
	printTask(l.Get(finished.ID))
	// Output:
	// {"active_examined":1,"applied":false,"deliveries_failed":1,"deliveries_not_applicable":0,"dry_run":true,"fresh_active_retained":0,"pending_delivery_examined":2,"pending_delivery_retained":1,"tasks_timed_out":1}
	// {"active_examined":1,"applied":true,"deliveries_failed":1,"deliveries_not_applicable":0,"dry_run":false,"fresh_active_retained":0,"pending_delivery_examined":2,"pending_delivery_retained":1,"tasks_timed_out":1}
	// 00000000-0000-4000-8000-000000000001 task=timed_out delivery=pending version=2
	// 00000000-0000-4000-8000-000000000002 task=succeeded delivery=failed version=2
}
