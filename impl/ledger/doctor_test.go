package ledger

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"slices"
	"testing"
)

// damage runs SQL on a copy of small-v2 through a plain connection (no
// ledger has the file open) and returns the copy's path.
func damage(t *testing.T, stmts ...string) string {
	t.Helper()
	p := copyFixture(t, "small-v2.sqlite")
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
	return p
}

func doctorOf(t *testing.T, p string) DoctorReport {
	t.Helper()

	// A plain connection may leave a WAL pair; either read-only path works.
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer l.Close()
	rep, err := l.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

const t07 = "'7a5c0007-0000-4000-8000-000000000007'"
const t09 = "'7a5c0009-0000-4000-8000-000000000009'"
const t10 = "'7a5c000a-0000-4000-8000-00000000000a'"

func TestDoctorDetectsDamage(t *testing.T) {
	requireFixtures(t)
	cases := []struct {
		name  string
		stmts []string
		count func(DoctorReport) int
	}{
		{"status edited", []string{"UPDATE tasks SET status='failed' WHERE id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event deleted", []string{"DELETE FROM task_events WHERE sequence = (SELECT max(sequence) FROM task_events WHERE task_id=" + t07 + ")"},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event from edited", []string{"UPDATE task_events SET from_value='queued' WHERE task_id=" + t07 + " AND to_value='succeeded'"},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event code edited", []string{"UPDATE task_events SET code=NULL WHERE task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"terminal event code edited", []string{"UPDATE task_events SET code='worker_completed' WHERE event_kind='task_transition' AND to_value='succeeded' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"terminal event code empty, task without a code", []string{"UPDATE tasks SET terminal_code=NULL WHERE id=" + t07,
			"UPDATE task_events SET code=NULL WHERE event_kind='task_transition' AND to_value='succeeded' AND task_id=" + t07,
			"UPDATE task_events SET code='' WHERE event_kind='task_transition' AND to_value='succeeded' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"terminal event from edited", []string{"UPDATE task_events SET from_value='queued' WHERE event_kind='task_transition' AND to_value='succeeded' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"terminal event time moved", []string{"UPDATE task_events SET occurred_at = occurred_at + 1 WHERE event_kind='task_transition' AND to_value='succeeded' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"delivery event code edited", []string{"UPDATE task_events SET code='transport_failed' WHERE event_kind='delivery_transition' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"delivery event state edited", []string{"UPDATE task_events SET to_value='failed' WHERE event_kind='delivery_transition' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"delivery event time moved", []string{"UPDATE task_events SET occurred_at = occurred_at + 1 WHERE event_kind='delivery_transition' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"start event time moved", []string{"UPDATE task_events SET occurred_at = occurred_at + 1 WHERE to_value='running' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"created event moved last", []string{"UPDATE task_events SET sequence = sequence + 100000 WHERE task_id=" + t07 + " AND event_kind='created'"},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event duplicated", []string{"INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) SELECT task_id, event_kind, from_value, to_value, occurred_at, code FROM task_events WHERE task_id=" + t07 + " AND event_kind='created'"},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event time moved", []string{"UPDATE task_events SET occurred_at = occurred_at + 1 WHERE task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event for unknown task", []string{"PRAGMA foreign_keys=OFF", "INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES ('00000000-0000-4000-8000-0000000000ee','created',NULL,'queued',978307200,'created')"},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event code empty", []string{"UPDATE task_events SET code='' WHERE event_kind='created' AND task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event from empty", []string{"UPDATE task_events SET from_value='' WHERE event_kind='created' AND task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event from blob", []string{"UPDATE task_events SET from_value=CAST(from_value AS BLOB) WHERE to_value='succeeded' AND task_id=" + t07},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event task id blob", []string{"PRAGMA foreign_keys=OFF", "UPDATE task_events SET task_id=CAST(task_id AS BLOB) WHERE event_kind='created' AND task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event code with separator", []string{"UPDATE task_events SET code=code || char(31) WHERE event_kind='created' AND task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event time text", []string{"UPDATE task_events SET occurred_at='x' WHERE event_kind='created' AND task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"event time infinite", []string{"UPDATE task_events SET occurred_at=9e999 WHERE event_kind='created' AND task_id=" + t10},
			func(r DoctorReport) int { return r.EventInconsistencyCount }},
		{"updated before started", []string{"UPDATE tasks SET updated_at = started_at - 5 WHERE id=" + t09},
			func(r DoctorReport) int { return r.TimestampInconsistencyCount }},
		{"text timestamp", []string{"UPDATE tasks SET updated_at = 'soon' WHERE id=" + t10},
			func(r DoctorReport) int { return r.TimestampInconsistencyCount }},
		{"orphan", []string{"PRAGMA foreign_keys=OFF", "UPDATE tasks SET parent_id='00000000-0000-4000-8000-0000000000ff' WHERE id=" + t10},
			func(r DoctorReport) int { return r.OrphanCount + r.ForeignKeyErrorCount }},
		{"cycle of two", []string{"UPDATE tasks SET parent_id=" + t10 + " WHERE id=" + t09, "UPDATE tasks SET parent_id=" + t09 + " WHERE id=" + t10},
			func(r DoctorReport) int { return r.ParentCycleCount }},
		{"unregistered code", []string{"UPDATE tasks SET terminal_code='worker_failed' WHERE id=" + t07},
			func(r DoctorReport) int { return r.StateInconsistencyCount }},
		{"upper-case id", []string{"PRAGMA foreign_keys=OFF", "UPDATE tasks SET id=upper(id) WHERE id=" + t10},
			func(r DoctorReport) int { return r.StateInconsistencyCount }},
		{"version too low", []string{"UPDATE tasks SET version=0 WHERE id=" + t07},
			func(r DoctorReport) int { return r.StateInconsistencyCount }},
		{"internal task delivered", []string{"UPDATE tasks SET delivery_required=0 WHERE id=" + t07},
			func(r DoctorReport) int { return r.StateInconsistencyCount }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := doctorOf(t, damage(t, c.stmts...))
			if rep.Healthy || c.count(rep) == 0 || !rep.SchemaOK {
				t.Fatalf("not detected: %s", reportJSON(rep))
			}
		})
	}
}

func TestDoctorSchemaDamage(t *testing.T) {
	requireFixtures(t)
	for name, stmts := range map[string][]string{
		"wrong fingerprint":   {"UPDATE schema_meta SET value='00' WHERE key='schema_fingerprint'"},
		"extra meta key":      {"INSERT INTO schema_meta VALUES ('note','x')"},
		"version 3":           {"UPDATE schema_meta SET value='3' WHERE key='schema_version'"},
		"extra index":         {"CREATE INDEX extra_idx ON tasks(created_at)"},
		"dropped index":       {"DROP INDEX tasks_parent_idx"},
		"meta column renamed": {"ALTER TABLE schema_meta RENAME COLUMN value TO valuA"},
	} {
		t.Run(name, func(t *testing.T) {
			rep := doctorOf(t, damage(t, stmts...))
			if rep.SchemaOK || rep.Healthy || rep.DoctorErrorCount != 1 || rep.TaskCount != 0 {
				t.Fatalf("schema damage not reported early: %s", reportJSON(rep))
			}
		})
	}
}

// TestDoctorQuickCheck overwrites the b-tree header of an index page in a
// copy: quick_check fails and the doctor says so.
func TestDoctorQuickCheck(t *testing.T) {
	requireFixtures(t)
	p := copyFixture(t, "small-v2.sqlite")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	var root int
	err = db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name='tasks_status_idx'").Scan(&root)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(p + "-wal")
	os.Remove(p + "-shm")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	off := (root - 1) * 4096
	for i := 8; i < 40; i++ {
		data[off+i] = 0xff
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rep := doctorOf(t, p)
	if rep.QuickCheckOK || rep.Healthy {
		t.Fatalf("corruption not detected: %s", reportJSON(rep))
	}
}

// TestDoctorCheckConstraints breaks each CHECK constraint of the schema in
// a copy (written with checks off): the read-only doctor's quick_check,
// which counts CHECK violations with its own query, must agree with a full
// PRAGMA quick_check on the same file, row violations and clean files alike.
func TestDoctorCheckConstraints(t *testing.T) {
	requireFixtures(t)
	off := "PRAGMA ignore_check_constraints = 1"
	cases := []struct {
		name string
		stmt string
		ok   bool
	}{
		{"clean", "SELECT 1", true},
		{"null passes", "UPDATE tasks SET timeout_seconds = NULL WHERE id=" + t07, true},
		{"status", "UPDATE tasks SET status='bogus' WHERE id=" + t07, false},
		{"delivery status", "UPDATE tasks SET delivery_status='bogus' WHERE id=" + t07, false},
		{"delivery required", "UPDATE tasks SET delivery_required=2 WHERE id=" + t07, false},
		{"payload hash length", "UPDATE tasks SET payload_hash='abc' WHERE id=" + t07, false},
		{"payload hash digits", "UPDATE tasks SET payload_hash=printf('%.64c', 'g') WHERE id=" + t07, false},
		{"negative timeout", "UPDATE tasks SET timeout_seconds=-1 WHERE id=" + t07, false},
		{"negative version", "UPDATE tasks SET version=-1 WHERE id=" + t07, false},
		{"own parent", "UPDATE tasks SET parent_id=id WHERE id=" + t07, false},
		{"deadline without start", "UPDATE tasks SET deadline_at=1, started_at=NULL WHERE id=" + t07, false},
		{"terminal without end", "UPDATE tasks SET ended_at=NULL WHERE id=" + t07, false},
		{"event kind", "UPDATE task_events SET event_kind='bogus' WHERE task_id=" + t07, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := damage(t, off, c.stmt)
			full := fullQuickCheck(t, p)
			rep := doctorOf(t, p)
			if full != c.ok || (rep.QuickCheckOK) != c.ok {
				t.Fatalf("full quick_check ok=%v, doctor ok=%v, want ok=%v", full, rep.QuickCheckOK, c.ok)
			}
		})
	}
}

// fullQuickCheck runs PRAGMA quick_check with CHECK constraints on through
// a plain connection.
func fullQuickCheck(t *testing.T, p string) bool {
	t.Helper()
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA quick_check")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, s)
	}
	return len(lines) == 1 && lines[0] == "ok"
}

// TestDoctorOddIDs pins the full report for ids of other types than TEXT
// (only a file written with foreign keys off holds them), which take the
// doctor's slower path: an event is matched to its task by the bytes of
// the ids, TEXT or BLOB, and a task whose id bytes another, later row
// shares (or whose id is not TEXT or BLOB at all) takes the verdict of
// the chain that row owns. t10 has 2 events and a child, t07 4 events.
// The counts were checked against the doctor this package had before
// it streamed (which kept every task in a map).
func TestDoctorOddIDs(t *testing.T) {
	requireFixtures(t)
	blobTwin := "INSERT INTO tasks SELECT CAST(id AS BLOB), parent_id, status, delivery_status, delivery_required, payload_hash, timeout_seconds, " +
		"created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version FROM tasks WHERE id="
	cases := []struct {
		name   string
		stmts  []string
		counts [4]int // event inconsistencies, foreign-key errors, orphans, state inconsistencies
	}{
		{"task id blob", []string{"UPDATE tasks SET id=CAST(id AS BLOB) WHERE id=" + t10}, [4]int{0, 2, 1, 0}},
		{"event task id blob", []string{"UPDATE task_events SET task_id=CAST(task_id AS BLOB) WHERE event_kind='created' AND task_id=" + t10}, [4]int{1, 1, 0, 0}},
		{"blob twin owns the chain", []string{blobTwin + t07}, [4]int{0, 0, 0, 0}},
		{"blob twin with a broken chain", []string{blobTwin + t07, "UPDATE tasks SET version=version+1, status='failed' WHERE rowid=(SELECT max(rowid) FROM tasks)"}, [4]int{2, 0, 0, 0}},
		{"null id", []string{"UPDATE tasks SET id=NULL WHERE id=" + t10}, [4]int{2, 2, 1, 1}},
		{"parent blob", []string{"UPDATE tasks SET parent_id=CAST(" + t07 + " AS BLOB) WHERE id=" + t10}, [4]int{0, 1, 1, 0}},
		{"events for two unknown ids", []string{
			"UPDATE task_events SET task_id='00000000-0000-4000-8000-0000000000ee' WHERE task_id=" + t10,
			"UPDATE task_events SET task_id=CAST('00000000-0000-4000-8000-0000000000ee' AS BLOB) WHERE task_id=" + t07 + " AND event_kind='created'"},
			[4]int{4, 2, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := doctorOf(t, damage(t, append([]string{"PRAGMA foreign_keys=OFF"}, c.stmts...)...))
			got := [4]int{rep.EventInconsistencyCount, rep.ForeignKeyErrorCount, rep.OrphanCount, rep.StateInconsistencyCount}
			if got != c.counts || rep.Healthy != (got == [4]int{}) || !rep.SchemaOK || rep.DoctorErrorCount != 0 {
				t.Fatalf("got %v, want %v: %s", got, c.counts, reportJSON(rep))
			}
		})
	}
}

// TestDoctorForeignKeysMatchPragma: the doctor counts the events' foreign
// key errors from its event stream when every id is TEXT (eventKeys); the
// count must be PRAGMA foreign_key_check's, whichever way it was taken.
func TestDoctorForeignKeysMatchPragma(t *testing.T) {
	requireFixtures(t)
	const unknown = "'00000000-0000-4000-8000-0000000000ee'"
	insertEvent := func(taskID string) string {
		return "INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES (" +
			taskID + ",'created',NULL,'queued',978307200,'task_created')"
	}
	cases := map[string][]string{
		"healthy":                      nil,
		"event for an unknown task":    {"PRAGMA foreign_keys=OFF", insertEvent(unknown)},
		"two events, one unknown task": {"PRAGMA foreign_keys=OFF", insertEvent(unknown), insertEvent(unknown)},
		"unknown tasks and an orphan": {"PRAGMA foreign_keys=OFF", insertEvent(unknown), insertEvent("'x'"),
			"UPDATE tasks SET parent_id='00000000-0000-4000-8000-0000000000ff' WHERE id=" + t10},
		"event task id blob of a task": {"PRAGMA foreign_keys=OFF",
			"UPDATE task_events SET task_id=CAST(task_id AS BLOB) WHERE event_kind='created' AND task_id=" + t10},
		"event task id blob of no task": {"PRAGMA foreign_keys=OFF", insertEvent("CAST(" + unknown + " AS BLOB)")},
		"parent id blob": {"PRAGMA foreign_keys=OFF",
			"UPDATE tasks SET parent_id=CAST(parent_id AS BLOB) WHERE parent_id IS NOT NULL"},
		"upper-case id": {"PRAGMA foreign_keys=OFF", "UPDATE tasks SET id=upper(id) WHERE id=" + t10},
		"blob id":       {"PRAGMA foreign_keys=OFF", "UPDATE tasks SET id=CAST(id AS BLOB) WHERE id=" + t10},
	}
	for name, stmts := range cases {
		t.Run(name, func(t *testing.T) {
			p := damage(t, stmts...)
			got := doctorOf(t, p).ForeignKeyErrorCount
			l, err := Open(p, Options{AllowExternalACL: onWindows})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			rep, err := l.Doctor()
			if err != nil {
				t.Fatal(err)
			}
			want, err := countRows(&txn{l: l, ctx: context.Background()}, "PRAGMA foreign_key_check")
			if err != nil {
				t.Fatal(err)
			}
			if got != want || rep.ForeignKeyErrorCount != want {
				t.Errorf("foreign key errors: read-only doctor %d, writable doctor %d, PRAGMA %d", got, rep.ForeignKeyErrorCount, want)
			}
			if name != "healthy" && want == 0 {
				t.Errorf("the damage broke no foreign key")
			}
		})
	}
}

// TestDoctorCountsEveryFailedQuery: each of the doctor's queries failing
// on its own (as an I/O or memory failure would) is a doctor error and an
// unhealthy report, never a healthy one and never a lost failure.
func TestDoctorCountsEveryFailedQuery(t *testing.T) {
	l, clk, _ := openTest(t)
	root, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	kid, err := l.Create(CreateParams{ParentID: root.ID, Internal: true})
	if err != nil {
		t.Fatal(err)
	}
	clk.now++
	if _, err := l.Start(kid.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CloseTask(kid.ID, StatusSucceeded, ""); err != nil {
		t.Fatal(err)
	}
	var queries []string
	hooks.doctorQueryFault = func(q string) error {
		if !slices.Contains(queries, q) {
			queries = append(queries, q)
		}
		return nil
	}
	t.Cleanup(func() { hooks.doctorQueryFault = nil })
	if rep, err := l.Doctor(); err != nil || !rep.Healthy {
		t.Fatalf("without faults: %+v %v", rep, err)
	}
	if len(queries) < 4 {
		t.Fatalf("only %d doctor queries seen", len(queries))
	}
	for _, failing := range queries {
		hooks.doctorQueryFault = func(q string) error {
			if q == failing {
				return errors.New("injected failure")
			}
			return nil
		}
		rep, err := l.Doctor()
		if failing == quickCheckSQL {
			// A quick_check that cannot answer fails it; spec 8 counts
			// that in quick_check alone, not as a doctor error.
			if err != nil || rep.Healthy || rep.QuickCheckOK || rep.DoctorErrorCount != 0 {
				t.Errorf("with quick_check failing: %+v, %v; want an unhealthy report whose quick_check failed", rep, err)
			}
			continue
		}
		if err != nil || rep.Healthy || rep.DoctorErrorCount < 1 {
			t.Errorf("with %.60q failing: healthy %v, doctor errors %d, %v; want an unhealthy report with a doctor error",
				failing, rep.Healthy, rep.DoctorErrorCount, err)
		}
	}
}
