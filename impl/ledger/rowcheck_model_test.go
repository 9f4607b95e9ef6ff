package ledger_test

import (
	"database/sql"
	"errors"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"os"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger"
	model "github.com/stateguard/stateguard/model/ledger"
)

// rowEdits are single hand edits of one row, each keeping every value's
// type (so that the rows can be read as model tasks), some breaking a
// row rule and some not.
var rowEdits = []struct{ role, set string }{
	{"queued", "status = 'running'"},
	{"queued", "ended_at = created_at"},
	{"queued", "version = 7"},
	{"queued", "delivery_code = 'internal_task'"},
	{"queued", "delivery_updated_at = created_at + 1"},
	{"queued", "started_at = created_at"},
	{"queued", "payload_hash = 'ABC'"},
	{"queued", "parent_id = 'not-a-uuid'"},
	{"queued", "delivery_required = 0"},
	{"running", "status = 'queued'"},
	{"running", "updated_at = created_at - 1"},
	{"running", "started_at = created_at - 1"},
	{"running", "deadline_at = deadline_at + 1"},
	{"running", "deadline_at = NULL"},
	{"running", "timeout_seconds = NULL, deadline_at = NULL"},
	{"running", "version = 0"},
	{"running", "updated_at = updated_at + 50"},
	{"failed", "terminal_code = 'reason_x'"},
	{"failed", "terminal_code = 'completed'"},
	{"failed", "terminal_code = NULL"},
	{"failed", "status = 'succeeded'"},
	{"failed", "ended_at = NULL"},
	{"failed", "updated_at = updated_at + 1"},
	{"failed", "version = 1"},
	{"failed", "delivery_status = 'not_applicable'"},
	{"failed", "delivery_status = 'delivered', delivery_updated_at = ended_at"},
	{"failed", "delivery_status = 'delivered', delivery_updated_at = ended_at, version = 3"},
	{"internal", "delivery_status = 'delivered', delivery_updated_at = ended_at, version = 2"},
	{"internal", "delivery_status = 'not_applicable', delivery_updated_at = ended_at - 1, version = 2"},
	{"internal", "delivery_required = 1"},
	{"internal", "status = 'bogus'"},
}

// TestRowCheckMatchesModelChecker: whether the ledger refuses to read a
// hand-edited row (StateConflict) is what the model's Checker, an
// independent reading of the row rules, says of that row alone (a state
// or timestamp finding), and the doctor counts the edited file as the
// Checker does. So the model covers what the operations refuse, although
// its own API never produces a damaged row.
func TestRowCheckMatchesModelChecker(t *testing.T) {
	for _, e := range rowEdits {
		t.Run(e.role+": "+e.set, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "ledger.sqlite")
			now := 1000.0
			n := 0
			l, err := ledger.Open(path, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows, NewID: func() (string, error) {
				n++
				return fmt.Sprintf("7a5c%04x-0000-4000-8000-000000000000", n), nil
			}}, func() float64 { return now }))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			must := func(task ledger.Task, err error) ledger.Task {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				return task
			}
			root := must(l.Create(ledger.CreateParams{}))
			ids := map[string]string{}
			for _, role := range []string{"queued", "running", "failed", "internal"} {
				timeout := 60.0
				ids[role] = must(l.Create(ledgerrows.WithTimeoutSeconds(ledger.CreateParams{ParentID: root.ID, Internal: role == "internal"}, timeout))).ID
			}
			now = 1010
			must(l.Start(ids["running"]))
			must(l.Start(ids["failed"]))
			now = 1020
			must(l.CloseTask(ids["failed"], ledger.StatusFailed, "worker_failed"))
			must(l.CloseTask(ids["internal"], ledger.StatusCancelled, ""))

			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			for _, s := range []string{"PRAGMA ignore_check_constraints = ON", "PRAGMA foreign_keys = OFF",
				fmt.Sprintf("UPDATE tasks SET %s WHERE id = '%s'", e.set, ids[e.role])} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			tasks, events, err := readRows(db)
			if err != nil {
				t.Fatal(err)
			}
			var edited model.Task
			for _, task := range tasks {
				if task.ID == ids[e.role] {
					edited = task
				}
			}
			alone := model.Check([]model.Task{edited}, nil)
			modelRefuses := alone.StateInconsistencyCount+alone.TimestampInconsistencyCount > 0

			_, gerr := l.Get(ids[e.role])
			if gerr != nil && !errors.Is(gerr, ledger.ErrStateConflict) {
				t.Fatalf("get: %v", gerr)
			}
			if refuses := gerr != nil; refuses != modelRefuses {
				t.Errorf("ledger refuses the row: %v; model's Checker finds it inconsistent: %v (%s)", refuses, modelRefuses, show(edited))
			}

			counts := model.Check(tasks, events)
			doc, err := l.Doctor()
			if err != nil {
				t.Fatal(err)
			}
			if doc.StateInconsistencyCount != counts.StateInconsistencyCount ||
				doc.TimestampInconsistencyCount != counts.TimestampInconsistencyCount ||
				doc.EventInconsistencyCount != counts.EventInconsistencyCount {
				t.Errorf("doctor state/time/event %d/%d/%d, Checker %d/%d/%d", doc.StateInconsistencyCount,
					doc.TimestampInconsistencyCount, doc.EventInconsistencyCount, counts.StateInconsistencyCount,
					counts.TimestampInconsistencyCount, counts.EventInconsistencyCount)
			}
		})
	}
}
