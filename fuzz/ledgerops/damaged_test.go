package ledgerops

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/fuzz/internal/fuzzbytes"
	"github.com/stateguard/stateguard/impl/ledger"
	model "github.com/stateguard/stateguard/model/ledger"
)

// fixtureIDs are the twelve tasks of the small-v2 and v1 fixtures.
var fixtureIDs = func() []string {
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = fmt.Sprintf("7a5c%04x-0000-4000-8000-%012x", i+1, i+1)
	}
	return ids
}()

var (
	taskColumns = []string{"status", "delivery_status", "delivery_required", "payload_hash", "timeout_seconds", "created_at",
		"started_at", "updated_at", "ended_at", "deadline_at", "delivery_updated_at", "terminal_code", "delivery_code", "version", "parent_id", "id"}
	eventColumns = []string{"task_id", "event_kind", "from_value", "to_value", "occurred_at", "code", "sequence"}
	editValues   = []any{nil, int64(0), int64(1), int64(-1), int64(2), 1.5, 1.7e9, 2.1e9, math.Inf(1), 1e308,
		"queued", "running", "succeeded", "failed", "timed_out", "cancelled", "pending", "delivered", "not_applicable",
		"created", "task_transition", "delivery_transition", "completed", "worker_failed", "internal_task", "started",
		"transport_acknowledged", "restart_stale", "Worker crashed (OOM)", "", "x", "1700000000",
		"7a5c0001-0000-4000-8000-000000000001", "7A5C0001-0000-4000-8000-000000000001", "7a5c00ff-0000-4000-8000-0000000000ff",
		strings.Repeat("ab", 32)}
	metaEdits = []string{
		`UPDATE schema_meta SET value = '1' WHERE key = 'schema_version'`,
		`UPDATE schema_meta SET value = '3' WHERE key = 'schema_version'`,
		`UPDATE schema_meta SET value = ' 2' WHERE key = 'schema_version'`,
		`DELETE FROM schema_meta WHERE key = 'schema_fingerprint'`,
		`INSERT INTO schema_meta (key, value) VALUES ('extra', 'x')`,
		`UPDATE schema_meta SET value = upper(value) WHERE key = 'schema_fingerprint'`,
		`DELETE FROM schema_meta`,
	}
	schemaEdits = []string{
		`CREATE INDEX extra_idx ON tasks(version)`,
		`DROP INDEX tasks_status_idx`,
		`CREATE TABLE extra (x)`,
		`CREATE VIEW extra_view AS SELECT 1`,
		`CREATE TRIGGER extra_trigger AFTER UPDATE ON tasks BEGIN SELECT 1; END`,
		`ALTER TABLE tasks ADD COLUMN extra TEXT`,
		`DROP TABLE task_events`,
	}
)

// damaged is what damage did and the rows it left.
type damaged struct {
	edits        []string // the statements that took effect
	schemaEdited bool     // one of them was a metadata or schema edit (otherwise the schema is still v2)
	tasks        []model.Task
	events       []model.Event
	rowsErr      error // the rows could not be read
}

// damage applies up to six fuzz-chosen SQL edits to the database at path
// with foreign keys off; an edit SQLite refuses (a CHECK) is skipped. It
// then reads every row on the same connection (one connection less than
// a separate reader) and closes it, the last connection to the file: the
// log is checkpointed and the directory holds the database alone.
func damage(t *testing.T, path string, in *fuzzbytes.Stream) (d damaged) {
	t.Helper()
	db, err := sql.Open("sqlite", rwURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	db.SetMaxOpenConns(1)
	defer func() { d.tasks, d.events, d.rowsErr = readRows(db) }()
	nth := func() int64 { return int64(in.Intn(40)) }
	for i := 0; i < 6 && !in.Done(); i++ {
		var q string
		var args []any
		op := in.Intn(10)
		switch op {
		case 0, 1:
			q = `UPDATE tasks SET ` + fuzzbytes.Pick(in, taskColumns) + ` = ? WHERE id = ?`
			args = []any{fuzzbytes.Pick(in, editValues), fuzzbytes.Pick(in, fixtureIDs)}
		case 2:
			q = `UPDATE task_events SET ` + fuzzbytes.Pick(in, eventColumns) + ` = ? WHERE sequence = (SELECT sequence FROM task_events ORDER BY sequence LIMIT 1 OFFSET ?)`
			args = []any{fuzzbytes.Pick(in, editValues), nth()}
		case 3:
			q = `DELETE FROM task_events WHERE sequence = (SELECT sequence FROM task_events ORDER BY sequence LIMIT 1 OFFSET ?)`
			args = []any{nth()}
		case 4: // move an event after all others (reorders a task's chain)
			q = `UPDATE task_events SET sequence = (SELECT max(sequence) + 1 FROM task_events) WHERE sequence = (SELECT sequence FROM task_events ORDER BY sequence LIMIT 1 OFFSET ?)`
			args = []any{nth()}
		case 5: // parent edits: orphans and cycles
			q = `UPDATE tasks SET parent_id = ? WHERE id = ?`
			args = []any{fuzzbytes.Pick(in, append([]string{"7a5c00ff-0000-4000-8000-0000000000ff"}, fixtureIDs...)), fuzzbytes.Pick(in, fixtureIDs)}
		case 6:
			q = `DELETE FROM tasks WHERE id = ?`
			args = []any{fuzzbytes.Pick(in, fixtureIDs)}
		case 7:
			q = fuzzbytes.Pick(in, metaEdits)
		case 8:
			q = fuzzbytes.Pick(in, schemaEdits)
		default:
			q = `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES (?, ?, ?, ?, ?, ?)`
			args = []any{fuzzbytes.Pick(in, fixtureIDs), fuzzbytes.Pick(in, []string{"created", "task_transition", "delivery_transition"}),
				fuzzbytes.Pick(in, editValues), fuzzbytes.Pick(in, []string{"queued", "running", "succeeded", "delivered"}),
				fuzzbytes.Pick(in, editValues), fuzzbytes.Pick(in, editValues)}
		}
		if _, err := db.Exec(q, args...); err == nil {
			d.edits = append(d.edits, fmt.Sprintf("%s %v", q, args))
			d.schemaEdited = d.schemaEdited || op == 7 || op == 8
		}
	}
	return d
}

// rwURI is a writable SQLite URI for path.
func rwURI(path string) string { return strings.TrimSuffix(roURI(path), "?mode=ro") }

// violations are the checker's finding counts.
func violations(c model.Counts) [6]int {
	return [6]int{c.OrphanCount, c.ParentCycleCount, c.ForeignKeyErrorCount, c.StateInconsistencyCount,
		c.TimestampInconsistencyCount, c.EventInconsistencyCount}
}

// FuzzDamagedLedger edits the reference's healthy small-v2 ledger with
// fuzz-chosen SQL statements (field edits, deleted, added or reordered
// events, orphans, cycles, deleted tasks, metadata and schema changes),
// then opens it read-only and for writing. Oracles: the doctor never
// panics or fails; it never says healthy when the model's checker finds a
// violation in the rows; wherever the schema is intact its counts equal
// the checker's; a schema that is not exactly v2 makes it unhealthy and a
// writable open refuse with StateConflict (bytes untouched), unless the
// edits left a v1 file to migrate; a writer that accepts operations never
// adds a violation, and keeps a healthy ledger healthy.
//
// The input's first byte chooses the directory's layout: 1 (mod 4) leaves
// an empty -wal and a -shm beside the file (a read-only SQLite connection
// reads the rows after the edits, as a reader that came and went would),
// so that the writable open decides through the read-only view
// (refusalThroughView); anything else leaves the file alone. The rest
// are the edits.
func FuzzDamagedLedger(f *testing.F) {
	base := fixture(f, "small-v2.sqlite")
	for _, s := range []string{
		"", "\x00\x00\x00\x00", "\x00\x0b\x00\x07\x03", "\x02\x05\x1d\x03\x04", "\x03\x02\x04\x07",
		"\x05\x00\x01\x05\x01\x00", "\x06\x00", "\x07\x00", "\x07\x03\x07\x00", "\x08\x00", "\x08\x05", "\x09\x00\x00\x00\x02\x07\x00",
		"\x00\x0d\x03\x02", "\x00\x05\x08\x00", "\x01\x0c\x1c\x04", "\x00\x02\x12\x08", "\x00\x02\x12\x01", "\x00\x06\x08\x00",
		// a required task made not_applicable, its delivery event too
		"\x00\x01\x12\x06\x02\x03\x12\x14",
	} {
		for _, layout := range []string{"\x00", "\x01"} { // each edit script in both layouts
			f.Add([]byte(layout + s))
		}
	}
	memo := map[[sha256.Size]byte]damagedVerdict{}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzbytes.New(data)
		sidecars := in.Intn(4) == 1
		path := privateDB(t, base)
		d := damage(t, path, in)
		show := "edits:\n  " + strings.Join(d.edits, "\n  ")
		if sidecars {
			show = "(empty -wal and -shm beside the file) " + show
			d.tasks, d.events, d.rowsErr = readRowsAt(path)
		}
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		key := dirKey(t, path)
		counts := model.Check(d.tasks, d.events)

		// Files that another input left before in this process passed
		// every check below but the doctor's judgement, which depends on
		// this input's account of its edits too: judge the doctor's report
		// of then again. The same input again (the toolchain runs an input
		// that found new coverage once more before it keeps it) runs in
		// full, so that its coverage is the same as the first time.
		if v, ok := memo[key]; ok && v.input != sha256.Sum256(data) {
			if err := judgeDoctor(v.doc, counts, d.rowsErr, d.schemaEdited); err != nil {
				t.Fatalf("%v\n%s", err, show)
			}
			return
		}

		ro, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: func() time.Time { return time.Unix(2e9, 0) }})
		if err != nil {
			t.Fatalf("read-only open refused a damaged ledger (%v)\n%s", err, show)
		}
		doc, err := ro.Doctor()
		ro.Close()
		if err != nil {
			t.Fatalf("doctor failed (%v)\n%s", err, show)
		}
		if err := judgeDoctor(doc, counts, d.rowsErr, d.schemaEdited); err != nil {
			t.Fatalf("%v\n%s", err, show)
		}
		remember := func() {
			if len(memo) >= memoLimit {
				clear(memo)
			}
			memo[key] = damagedVerdict{sha256.Sum256(data), doc}
		}

		w, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(2e9, 0) }})
		if err != nil {
			if !errors.Is(err, ledger.ErrStateConflict) {
				t.Fatalf("writable open refused without StateConflict: %v\n%s", err, show)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, before) {
				t.Fatalf("a refused writable open changed the file\n%s", show)
			}
			remember()
			return
		}
		if !doc.SchemaOK && doc.SchemaVersion != 1 {
			w.Close()
			t.Fatalf("writable open accepted a schema that is neither v2 nor v1 (doctor %+v)\n%s", doc, show)
		}
		fresh := "7a5c0100-0000-4000-8000-000000000100"
		_, cerr := w.Create(ledger.CreateParams{TaskID: fresh, ParentID: fixtureIDs[0]})
		w.Start(fresh)
		w.CloseTask(fresh, "succeeded", "completed")
		w.SetDelivery(fresh, "delivered", "")
		for _, id := range fixtureIDs {
			w.Start(id)
			w.Heartbeat(id)
			w.CloseTask(id, "succeeded", "")
			w.SetDelivery(id, "delivered", "")
		}
		w.Reconcile(ledger.ReconcileOptions{})
		if err := w.Close(); err != nil {
			t.Fatalf("close: %v\n%s", err, show)
		}
		if d.rowsErr != nil {
			remember()
			return
		}
		tasksAfter, eventsAfter, err := readRowsAt(path)
		if err != nil {
			t.Fatalf("rows unreadable after writes: %v\n%s", err, show)
		}
		after := model.Check(tasksAfter, eventsAfter)
		va, vb := violations(after), violations(counts)
		for i := range va {
			if va[i] > vb[i] {
				t.Fatalf("writes added a violation: checker before %+v\nafter %+v\ncreate of a fresh task: %v\n%s", counts, after, cerr, show)
			}
		}
		remember()
	})
}

// damagedVerdict is what FuzzDamagedLedger keeps of files that passed:
// a digest of the input that left them and the read-only doctor's report
// on them.
type damagedVerdict struct {
	input [sha256.Size]byte
	doc   ledger.DoctorReport
}

// memoLimit bounds the files FuzzDamagedLedger remembers (it forgets them
// all when full).
const memoLimit = 1 << 14

// dirKey is a digest of every file in path's directory, names and bytes.
// Every answer FuzzDamagedLedger checks after its edits is the engine's
// on these files alone (its clock is fixed and it draws no id), so an
// input that leaves files equal to an earlier input's gets the same
// answers: one in two or three inputs does (refused or repeated edits).
func dirKey(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%q %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// judgeDoctor is FuzzDamagedLedger's oracle on the read-only doctor's
// report, given the checker's counts on the rows (rowsErr: unreadable).
// schemaEdited says whether a metadata or schema edit took effect. When
// none did, the schema is v2 by the test's own account (row edits that
// break a CHECK or UNIQUE rule are refused by SQLite), so the doctor must
// say so and its counts must equal the checker's: gating the comparison on
// the doctor's own SchemaOK, quick_check and doctor error count alone would
// let a doctor hide findings behind any of them.
func judgeDoctor(doc ledger.DoctorReport, counts model.Counts, rowsErr error, schemaEdited bool) error {
	schemaIntact := doc.SchemaOK && doc.QuickCheckOK && doc.DoctorErrorCount == 0
	if rowsErr == nil && !schemaEdited {
		schemaIntact = true
		if !doc.SchemaOK || !doc.QuickCheckOK || doc.DoctorErrorCount != 0 {
			return fmt.Errorf("schema untouched: doctor says schema ok %v, quick_check ok %v, %d doctor error(s)",
				doc.SchemaOK, doc.QuickCheckOK, doc.DoctorErrorCount)
		}
	}
	switch {
	case rowsErr != nil && doc.Healthy:
		return fmt.Errorf("doctor says healthy, rows the checker cannot read (%v)", rowsErr)
	case rowsErr == nil && doc.Healthy && !counts.Healthy():
		return fmt.Errorf("doctor says healthy, checker finds %+v", counts)
	case rowsErr == nil && schemaIntact && !sameCounts(doc, counts):
		return fmt.Errorf("doctor %+v\nchecker %+v", doctorCounts(doc), counts)
	}
	return nil
}
