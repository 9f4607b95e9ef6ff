package benchseed

import (
	"database/sql"
	"fmt"

	_ "modernc.org/sqlite" // the driver of LedgerRows' connection
)

// LedgerRows fills the empty ledger at path with the benchmark workload:
// n tasks stamped around now, of which 30% are queued, 30% are running and
// stale (every other running task, counted among the running ones, with a
// 900 s timeout whose deadline has passed), and 40% are terminal with a
// pending delivery (half of them internal). Every time lies between
// now-100000 and now-90000, so with graces of 600 s a reconcile at now
// times out every running task and closes every pending delivery that was
// terminal before.
//
// The ledger must exist and hold no task: impl/ledger's Open makes it
// (this package cannot call Open, because impl/ledger's own tests seed
// through it). The rows and events are exactly what Create, Start and
// CloseTask would write at those times, so the doctor finds the file
// healthy, but they go in with plain SQL in one transaction, because
// seeding 100,000 tasks one operation at a time would take minutes.
func LedgerRows(path string, n int, now float64) (err error) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	task, err := tx.Prepare(`INSERT INTO tasks (id, parent_id, status, delivery_status, delivery_required, payload_hash,
		timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version)
		VALUES (?, NULL, ?, 'pending', ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`)
	if err != nil {
		return err
	}
	defer task.Close()
	event, err := tx.Prepare(`INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer event.Close()
	base := now - 100000
	// Tasks are created 0.05 s apart, closer above 200,000 tasks so that
	// every creation stays within the first 10,000 s.
	step := 0.05
	if n > 200000 {
		step = 10000 / float64(n)
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		created := base + float64(i)*step
		var (
			status            = "queued"
			required          = 1
			started, deadline any
			ended, code       any
			timeout           any
			updated           = created
			version           = 0
		)
		switch i % 10 {
		case 3, 4, 5:
			status = "running"
			s := created + 1
			started, updated, version = s, s, 1
			// Every other running task (counted among the running ones,
			// not by i, which would give a third) has a timeout.
			if running := i/10*3 + i%10 - 3; running%2 == 0 {
				timeout, deadline = 900.0, s+900
			}
		case 6, 7, 8, 9:
			status = "succeeded"
			s, e := created+1, created+2
			started, ended, updated, code, version = s, e, e, "completed", 2
			if i%2 == 1 {
				required = 0
			}
		}
		if _, err := task.Exec(id, status, required, timeout, created, started, updated, ended, deadline, created, code, version); err != nil {
			return err
		}
		// The events Create, Start and CloseTask write.
		if _, err := event.Exec(id, "created", nil, "queued", created, "created"); err != nil {
			return err
		}
		if started != nil {
			if _, err := event.Exec(id, "task_transition", "queued", "running", started, "started"); err != nil {
				return err
			}
		}
		if ended != nil {
			if _, err := event.Exec(id, "task_transition", "running", status, ended, code); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
