//go:build linux || darwin

package ledger

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// oldSnapshotCeiling is the size above which the read-only open used to
// refuse a ledger (it copied the whole file into memory).
const oldSnapshotCeiling = 64 << 20

// seedQueuedSQL fills a fresh ledger with n queued tasks and their created
// events in two set-based statements: each row is what Create writes.
const seedQueuedSQL = `
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d - 1)
INSERT INTO tasks (id, parent_id, status, delivery_status, delivery_required, payload_hash, timeout_seconds,
	created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version)
SELECT printf('%%08x-0000-4000-8000-%%012x', i, i), NULL, 'queued', 'pending', 1,
	printf('%%064x', i), 900.0, 1000.0 + i, NULL, 1000.0 + i, NULL, NULL, 1000.0 + i, NULL, NULL, 0 FROM n;
INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
SELECT id, 'created', NULL, 'queued', created_at, 'created' FROM tasks ORDER BY created_at;`

// TestReadOnlyOverOldCeiling: a ledger just over the 64 MiB the
// read-only path used to copy is read: doctor, a dry run and get of the
// last task, written through the API and still in the -wal. To keep the
// test fast the file's first 64 MiB are free pages (a task with a huge
// text is written first and deleted after the others), so every page of the
// 20,000 real tasks lies past the old ceiling.
func TestReadOnlyOverOldCeiling(t *testing.T) {
	const n = 20000
	p := filepath.Join(privateDir(t), "large.sqlite")
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	db, err := sql.Open("sqlite", fileURI(p, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The filler's text sits in a column no index covers.
	filler := `INSERT INTO tasks (id, status, delivery_status, delivery_required, created_at, updated_at, delivery_updated_at, terminal_code)
		VALUES ('filler', 'queued', 'pending', 1, 0, 0, 0, hex(zeroblob(34000000)))`
	for _, q := range []string{"PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF", filler, fmt.Sprintf(seedQueuedSQL, n),
		"DELETE FROM task_events WHERE task_id = 'filler'", "DELETE FROM tasks WHERE id = 'filler'", "PRAGMA journal_mode = WAL"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// One more task through the API, left in the -wal by a second
	// connection, as a killed writer would leave it.
	keeper, err := sql.Open("sqlite", fileURI(p, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer keeper.Close()
	keeper.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA wal_autocheckpoint = 0", "SELECT count(*) FROM schema_meta"} {
		if _, err := keeper.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	w, err = Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000 + n)})
	if err != nil {
		t.Fatal(err)
	}
	last, err := w.Create(CreateParams{TaskID: "ffffffff-0000-4000-8000-000000000000"})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil || info.Size() <= oldSnapshotCeiling {
		t.Fatalf("seeded %d bytes, want more than %d", info.Size(), oldSnapshotCeiling)
	}
	if _, err := os.Stat(p + "-wal"); err != nil {
		t.Fatal("the last task is not in the -wal")
	}

	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(1000 + n)})
	if err != nil {
		t.Fatalf("read-only open of %d bytes: %v", info.Size(), err)
	}
	defer r.Close()
	got, err := r.Get(last.ID)
	if err != nil || got.CreatedAt != last.CreatedAt {
		t.Fatalf("get: %v", err)
	}
	rr, err := r.reconcileFloat(600, 600, true)
	if err != nil || rr.ActiveExamined != n+1 {
		t.Fatalf("dry run %s %v", reconcileJSON(rr), err)
	}
	rep, err := r.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != n+1 || rep.EventCount != n+1 {
		t.Fatalf("doctor %s %v", reportJSON(rep), err)
	}
}
