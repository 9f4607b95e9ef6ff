package ledger_test

// Tests for guarantees of spec/task-state-guard.md that bugs planted by hand
// once slipped past: each test below fails on the planted bug named in its
// comment.

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
	model "github.com/stateguard/stateguard/model/ledger"
)

// onWindows acknowledges the external ACL there (spec 11.3).
const onWindows = runtime.GOOS == "windows"

// privateFixture copies a fixture ledger into a fresh 0700 directory, 0600.
func privateFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testfixtures.Dir(t, "ledger"), name))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// edit runs SQL on a ledger file through a plain connection, closed before
// it returns (the last close checkpoints and removes the WAL pair).
func edit(t *testing.T, p string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestReadOnlyOpenKeepsLooseSidecarModes: a read-only open refuses a
// sidecar whose mode is not private (InvalidInput, 12.5) and never
// tightens it (12.1: nothing is re-permissioned). Planted bug: a read-only
// open that chmods a loose sidecar to 0600 and goes on.
func TestReadOnlyOpenKeepsLooseSidecarModes(t *testing.T) {
	if onWindows {
		t.Skip("POSIX modes")
	}
	p := privateFixture(t, "small-v2.sqlite")
	// A live writer keeps the WAL pair on disk.
	w, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(2e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Create(ledger.CreateParams{}); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		for _, loose := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
			side := p + suffix
			if _, err := os.Lstat(side); err != nil {
				t.Fatalf("%s missing beside a live writer: %v", suffix, err)
			}
			if err := os.Chmod(side, loose); err != nil {
				t.Fatal(err)
			}
			l, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
			if err == nil {
				l.Close()
			}
			if !errors.Is(err, ledger.ErrInvalidInput) {
				t.Errorf("%s %v: read-only open gave %v, want InvalidInput", suffix, loose, err)
			}
			if got := mode(t, side); got != loose {
				t.Errorf("%s %v: read-only open changed its mode to %v", suffix, loose, got)
			}
			if err := os.Chmod(side, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The same file with private sidecars opens: the refusals above were
	// about the modes.
	l, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open beside private sidecars: %v", err)
	}
	l.Close()
}

const (
	v1Task1 = "'7a5c0001-0000-4000-8000-000000000001'"
	v1Task7 = "'7a5c0007-0000-4000-8000-000000000007'"
	v1Task2 = "'7a5c0002-0000-4000-8000-000000000002'"
)

// TestV1UnsafeAnywhereIsRefused: a v1 file migrates only when every code
// and every event row is valid (9.5); one unsafe value anywhere, a task's
// delivery code or a single event row included, refuses the writable open
// with StateConflict and leaves the file byte for byte. Planted bugs: a
// safety check that reads only terminal codes, or only task rows.
func TestV1UnsafeAnywhereIsRefused(t *testing.T) {
	cases := []struct{ name, stmt string }{
		{"delivery code only", "UPDATE tasks SET delivery_code = 'Delivered OK' WHERE id = " + v1Task1},
		{"delivery code of another state", "UPDATE tasks SET delivery_code = 'internal_task' WHERE id = " + v1Task1},
		{"created event code", "UPDATE task_events SET code = 'Created' WHERE task_id = " + v1Task7 + " AND event_kind = 'created'"},
		{"start event code null", "UPDATE task_events SET code = NULL WHERE task_id = " + v1Task7 + " AND to_value = 'running'"},
		{"terminal event code", "UPDATE task_events SET code = 'Worker crashed (OOM)' WHERE task_id = " + v1Task7 + " AND to_value = 'succeeded'"},
		{"delivery event code", "UPDATE task_events SET code = 'acked' WHERE task_id = " + v1Task7 + " AND event_kind = 'delivery_transition'"},
		{"delivery event from null", "UPDATE task_events SET from_value = NULL WHERE task_id = " + v1Task7 + " AND event_kind = 'delivery_transition'"},
		{"terminal event from null", "UPDATE task_events SET from_value = NULL WHERE task_id = " + v1Task7 + " AND to_value = 'succeeded'"},
		{"delivery event kind", "UPDATE task_events SET event_kind = 'task_transition' WHERE task_id = " + v1Task2 + " AND event_kind = 'delivery_transition'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := privateFixture(t, "v1-safe.sqlite")
			edit(t, p, c.stmt)
			before, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			l, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(2e9, 0) }})
			if err == nil {
				l.Close()
				t.Fatal("an unsafe v1 file was migrated")
			}
			if !errors.Is(err, ledger.ErrStateConflict) {
				t.Fatalf("open: %v, want StateConflict", err)
			}
			after, _ := os.ReadFile(p)
			entries, _ := os.ReadDir(filepath.Dir(p))
			if !bytes.Equal(after, before) || len(entries) != 1 {
				t.Fatalf("a refused v1 file was changed (%d entries)", len(entries))
			}
		})
	}
	// Control: the untouched v1-safe still migrates.
	p := privateFixture(t, "v1-safe.sqlite")
	l, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(2e9, 0) }})
	if err != nil {
		t.Fatalf("v1-safe refused: %v", err)
	}
	l.Close()
}

// TestDoctorCountsDeliveryKindMismatch: a delivery-required task whose
// delivery is not_applicable, and an internal task whose closed delivery
// is anything else, each break 8.2 ("required tasks never not_applicable,
// internal tasks only not_applicable once closed") and nothing else: one
// state inconsistency each, unhealthy, as the model's checker says too.
// Planted bug: a doctor that no longer counts a required not_applicable.
func TestDoctorCountsDeliveryKindMismatch(t *testing.T) {
	const t7 = "'7a5c0007-0000-4000-8000-000000000007'" // required, succeeded, delivered, no codes
	const t2 = "'7a5c0002-0000-4000-8000-000000000002'" // internal, succeeded, not_applicable
	cases := []struct {
		name  string
		stmts []string
	}{
		{"required task not_applicable", []string{
			"UPDATE tasks SET delivery_status = 'not_applicable' WHERE id = " + t7,
			"UPDATE task_events SET to_value = 'not_applicable' WHERE task_id = " + t7 + " AND event_kind = 'delivery_transition'"}},
		{"internal task delivered", []string{
			"UPDATE tasks SET delivery_status = 'delivered', delivery_code = NULL WHERE id = " + t2,
			"UPDATE task_events SET to_value = 'delivered', code = NULL WHERE task_id = " + t2 + " AND event_kind = 'delivery_transition'"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := privateFixture(t, "small-v2.sqlite")
			edit(t, p, c.stmts...)
			l, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := l.Doctor()
			l.Close()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Healthy || rep.StateInconsistencyCount != 1 || rep.TimestampInconsistencyCount != 0 ||
				rep.EventInconsistencyCount != 0 || rep.OrphanCount != 0 || rep.ForeignKeyErrorCount != 0 {
				t.Errorf("doctor %+v; want exactly one state inconsistency", rep)
			}
			tasks, events := rowsOf(t, p)
			if c := model.Check(tasks, events); c.StateInconsistencyCount != 1 || c.Healthy() {
				t.Errorf("checker %+v; want exactly one state inconsistency", c)
			}
		})
	}
}

// rowsOf reads a closed ledger's rows for the model's checker.
func rowsOf(t *testing.T, p string) ([]model.Task, []model.Event) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tasks, events, err := readRows(db)
	if err != nil {
		t.Fatal(err)
	}
	return tasks, events
}
