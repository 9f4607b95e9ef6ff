package ledgerops

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/fuzz/internal/fuzzbytes"
	"github.com/stateguard/stateguard/impl/ledger"
	model "github.com/stateguard/stateguard/model/ledger"
)

var (
	legacyCodes = []any{nil, "completed", "worker_completed", "worker_failed", "deadline_exceeded", "restart_stale",
		"caller_cancelled", "transport_acknowledged", "delivery_grace_expired", "transport_failed", "internal_task",
		"created", "started", "Worker crashed (OOM)", "", "timeout", "COMPLETED"}
	legacyStates = []any{nil, "queued", "running", "succeeded", "failed", "timed_out", "cancelled", "pending", "delivered", "not_applicable"}
	legacyTimes  = []any{1.0, 1.7e9, 1.8e9, 2.5e9, -1.0}
)

// editV1 applies up to six fuzz-chosen edits of codes, events and times to
// a v1 file; statements SQLite refuses (a CHECK) are skipped.
func editV1(t *testing.T, path string, in *fuzzbytes.Stream) []string {
	t.Helper()
	db, err := sql.Open("sqlite", rwURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var done []string
	seq := func() int64 { return int64(1 + in.Intn(36)) }
	for i := 0; i < 6 && !in.Done(); i++ {
		var q string
		var args []any
		switch in.Intn(9) {
		case 0:
			q, args = `UPDATE tasks SET terminal_code = ? WHERE id = ?`, []any{fuzzbytes.Pick(in, legacyCodes), fuzzbytes.Pick(in, fixtureIDs)}
		case 1:
			q, args = `UPDATE tasks SET delivery_code = ? WHERE id = ?`, []any{fuzzbytes.Pick(in, legacyCodes), fuzzbytes.Pick(in, fixtureIDs)}
		case 2:
			q, args = `UPDATE task_events SET code = ? WHERE sequence = ?`, []any{fuzzbytes.Pick(in, legacyCodes), seq()}
		case 3:
			q, args = `UPDATE task_events SET from_value = ? WHERE sequence = ?`, []any{fuzzbytes.Pick(in, legacyStates), seq()}
		case 4:
			q, args = `UPDATE task_events SET to_value = ? WHERE sequence = ?`, []any{fuzzbytes.Pick(in, legacyStates), seq()}
		case 5:
			q, args = `UPDATE task_events SET event_kind = ? WHERE sequence = ?`,
				[]any{fuzzbytes.Pick(in, []string{"created", "task_transition", "delivery_transition"}), seq()}
		case 6:
			col := fuzzbytes.Pick(in, []string{"created_at", "updated_at", "delivery_updated_at", "started_at", "ended_at"})
			q, args = `UPDATE tasks SET `+col+` = ? WHERE id = ?`, []any{fuzzbytes.Pick(in, legacyTimes), fuzzbytes.Pick(in, fixtureIDs)}
		case 7:
			q, args = `UPDATE task_events SET occurred_at = ? WHERE sequence = ?`, []any{fuzzbytes.Pick(in, legacyTimes), seq()}
		default:
			q, args = `DELETE FROM task_events WHERE sequence = ?`, []any{seq()}
		}
		if _, err := db.Exec(q, args...); err == nil {
			done = append(done, fmt.Sprintf("%s %v", q, args))
		}
	}
	return done
}

// migrationSafe is the test's own reading of spec 9.5: every stored code
// is registered for the state it accompanies and every event row is one
// of the four shapes of 9.4 with a registered (or null) code.
func migrationSafe(tasks []model.Task, events []model.Event) bool {
	for _, t := range tasks {
		if t.TerminalCode != nil && !model.TaskMachine.CodeRegistered(t.Status, *t.TerminalCode) {
			return false
		}
		if t.DeliveryCode != nil && !model.DeliveryMachine.CodeRegistered(t.DeliveryStatus, *t.DeliveryCode) {
			return false
		}
	}
	is := func(p *string, s string) bool { return p != nil && *p == s }
	for _, e := range events {
		var ok bool
		switch e.Kind {
		case model.EventCreated:
			ok = e.From == nil && e.To == model.StatusQueued && is(e.Code, model.CodeCreated)
		case model.EventTaskTransition:
			switch {
			case is(e.From, model.StatusQueued) && e.To == model.StatusRunning:
				ok = is(e.Code, model.CodeStarted)
			case (is(e.From, model.StatusQueued) || is(e.From, model.StatusRunning)) && model.TaskMachine.IsTerminal(e.To):
				ok = e.Code == nil || model.TaskMachine.CodeRegistered(e.To, *e.Code)
			}
		case model.EventDeliveryTransition:
			ok = is(e.From, model.DeliveryPending) && model.DeliveryMachine.IsTerminal(e.To) &&
				(e.Code == nil || model.DeliveryMachine.CodeRegistered(e.To, *e.Code))
		}
		if !ok {
			return false
		}
	}
	return true
}

// FuzzV1Migration edits the reference's v1-safe ledger (codes of tasks and
// events, event shapes, times, deleted events) and opens it. Oracles: the
// read-only doctor reports every v1 file as it is (version 1, schema not
// ok, one doctor error); a writable open migrates exactly when the test's
// own reading of 9.5 calls every code and event safe, and then the file is
// v2 with its rows unchanged, and its doctor equals the model's checker
// (healthy when the rows were); otherwise the open is StateConflict and the
// directory is left byte for byte as it was.
func FuzzV1Migration(f *testing.F) {
	base := fixture(f, "v1-safe.sqlite")
	for _, s := range []string{
		"", "\x00\x0d\x07", "\x01\x0d\x06", "\x01\x05\x00", "\x02\x0c\x01", "\x02\x0c\x00", "\x02\x01\x0c",
		"\x03\x02\x00", "\x04\x02\x09", "\x05\x01\x00", "\x06\x00\x02\x00", "\x07\x03\x00", "\x08\x00",
		"\x00\x06\x00\x00\x01\x05", "\x02\x13\x00", "\x01\x0b\x10",
		"\x02\x01\x01", "\x02\x00\x01", // a start event whose code is not "started"
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := privateDB(t, base)
		edits := editV1(t, path, fuzzbytes.New(data))
		show := "edits:\n  " + strings.Join(edits, "\n  ")
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tasks, events, err := readRowsAt(path)
		if err != nil {
			t.Fatalf("rows: %v\n%s", err, show)
		}
		// After readRowsAt: its read-only SQLite connection leaves an empty
		// -wal and a -shm beside the WAL-mode file, which a refusing open
		// leaves in place (spec 9.5).
		names := dirNames(t, path)
		safe := migrationSafe(tasks, events)

		ro, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: func() time.Time { return time.Unix(2e9, 0) }})
		if err != nil {
			t.Fatalf("read-only open of a v1 file: %v\n%s", err, show)
		}
		doc, err := ro.Doctor()
		ro.Close()
		if err != nil || doc.SchemaVersion != 1 || doc.SchemaOK || doc.DoctorErrorCount != 1 || doc.Healthy {
			t.Fatalf("doctor on a v1 file: %+v %v\n%s", doc, err, show)
		}

		w, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(2e9, 0) }})
		if !safe {
			if err == nil {
				w.Close()
				t.Fatalf("an unsafe v1 file was migrated\n%s", show)
			}
			if !errors.Is(err, ledger.ErrStateConflict) {
				t.Fatalf("unsafe v1: %v, want StateConflict\n%s", err, show)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, before) || dirNames(t, path) != names {
				t.Fatalf("a refused v1 file was changed\n%s", show)
			}
			return
		}
		if err != nil {
			t.Fatalf("a safe v1 file was refused: %v\n%s", err, show)
		}
		wdoc, err := w.Doctor()
		w.Close()
		if err != nil {
			t.Fatalf("doctor after migration: %v\n%s", err, show)
		}
		tasksAfter, eventsAfter, err := readRowsAt(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tasksAfter, tasks) || !reflect.DeepEqual(eventsAfter, events) {
			t.Fatalf("migration changed rows\n%s", show)
		}
		counts := model.Check(tasks, events)
		if wdoc.SchemaVersion != 2 || !wdoc.SchemaOK || wdoc.DoctorErrorCount != 0 || !sameCounts(wdoc, counts) ||
			wdoc.Healthy != counts.Healthy() {
			t.Fatalf("after migration: doctor %+v\nchecker %+v\n%s", wdoc, counts, show)
		}
	})
}
