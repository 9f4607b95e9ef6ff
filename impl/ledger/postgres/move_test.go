package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// The columns every row comparison reads, the same on both engines.
const (
	taskRowsSQL = `SELECT id, parent_id, status, delivery_status, delivery_required, payload_hash, timeout_seconds,
		created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version
		FROM %stasks ORDER BY id`
	eventRowsSQL = `SELECT sequence, task_id, event_kind, from_value, to_value, occurred_at, code FROM %stask_events ORDER BY sequence`
)

// showValue prints a column's value so that the engines' types compare:
// numbers as numbers (a float with its bits, so -0 and 0 differ), NULL
// as null.
func showValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case float64:
		return fmt.Sprintf("%v/%x", x, math.Float64bits(x))
	case int32:
		return fmt.Sprint(int64(x))
	}
	return fmt.Sprint(v)
}

// showRow is a row's values as one line, each as showValue writes it.
func showRow(vals []any) string {
	line := make([]string, len(vals))
	for i, v := range vals {
		line[i] = showValue(v)
	}
	return strings.Join(line, " ")
}

// fileLedger makes a SQLite ledger at path, hands it to fill with its
// test clock (starting at 1,000,000 s), and closes it.
func fileLedger(t *testing.T, path string, fill func(l *ledger.Ledger, now *float64)) {
	t.Helper()
	now := 1_000_000.0
	l, err := ledger.Open(path, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows}, func() float64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	fill(l, &now)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// fileRows reads every task and every event of a SQLite ledger file
// directly, one line a row.
func fileRows(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	for _, q := range []string{fmt.Sprintf(taskRowsSQL, ""), fmt.Sprintf(eventRowsSQL, "")} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, showRow(vals))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return strings.Join(out, "\n")
}

// serverRows reads every task and event of a schema as fileRows does.
func serverRows(t *testing.T, conn *pgx.Conn, schema string) string {
	t.Helper()
	prefix := pgx.Identifier{schema}.Sanitize() + "."
	var out []string
	for _, q := range []string{fmt.Sprintf(taskRowsSQL, prefix), fmt.Sprintf(eventRowsSQL, prefix)} {
		q = strings.Replace(q, "ORDER BY id", `ORDER BY id COLLATE "C"`, 1)
		rows, err := conn.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, showRow(vals))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return strings.Join(out, "\n")
}

// TestRoundTripBetweenEngines: a SQLite ledger (trees in every state,
// reconciled, one tree pruned so its event numbers are gone) restored
// into an empty ledger on the server, then backed up from there to a
// new SQLite file: the restore reports the file's counts, the server
// then holds every row of the file (events with their sequences), the
// copy every row of the server, and the doctor calls each healthy with
// the same report. A task created on the server after the restore is
// numbered above the restored events.
func TestRoundTripBetweenEngines(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	dir := t.TempDir()
	first := filepath.Join(dir, "first.sqlite")
	var wantDoctor ledger.DoctorReport
	fileLedger(t, first, func(file *ledger.Ledger, now *float64) {
		pruneSequence(t, file, now)
		cutoff := *now - 5_000
		if rep, err := file.Prune(ledgerrows.PruneSeconds(cutoff, false)); err != nil || rep.TreesRemoved == 0 {
			t.Fatalf("prune before the move: %+v, %v", rep, err)
		}
		var err error
		if wantDoctor, err = file.Doctor(); err != nil || !wantDoctor.Healthy {
			t.Fatalf("the SQLite ledger: %s, %v", reportJSON(t, wantDoctor), err)
		}
	})
	original := fileRows(t, first)
	st, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := restore(ctx, url, first, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "moved"})
	if err != nil {
		t.Fatalf("restore into the server: %v", err)
	}
	if rep.TaskCount != wantDoctor.TaskCount || rep.EventCount != wantDoctor.EventCount || rep.Bytes != st.Size() {
		t.Fatalf("restore report %+v; the file holds %d tasks, %d events in %d bytes", rep, wantDoctor.TaskCount, wantDoctor.EventCount, st.Size())
	}
	conn := direct(t, url)
	if got := serverRows(t, conn, "moved"); got != original {
		t.Fatalf("rows on the server\n%s\nrows of the file\n%s", got, original)
	}
	server := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "moved"})
	if got, err := server.Doctor(); err != nil || reportJSON(t, got) != reportJSON(t, wantDoctor) {
		t.Fatalf("doctor on the server after the restore\n%s (%v)\non the file\n%s", reportJSON(t, got), err, reportJSON(t, wantDoctor))
	}

	second := filepath.Join(dir, "second.sqlite")
	back, err := server.Backup(second)
	if err != nil {
		t.Fatalf("backup from the server: %v", err)
	}
	if back.TaskCount != rep.TaskCount || back.EventCount != rep.EventCount {
		t.Fatalf("backup report %+v after restore report %+v", back, rep)
	}
	if st, err := os.Stat(second); err != nil || st.Size() != back.Bytes {
		t.Fatalf("backup file: %v, %v; report %+v", st, err, back)
	}
	if got := fileRows(t, second); got != original {
		t.Fatalf("rows of the copy\n%s\nrows of the first file\n%s", got, original)
	}
	copied, err := ledger.Open(second, ledger.Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	if got, err := copied.Doctor(); err != nil || reportJSON(t, got) != reportJSON(t, wantDoctor) {
		t.Fatalf("doctor on the copy\n%s (%v)\non the first file\n%s", reportJSON(t, got), err, reportJSON(t, wantDoctor))
	}

	var largest int64
	if err := conn.QueryRow(ctx, `SELECT max(sequence) FROM moved.task_events`).Scan(&largest); err != nil {
		t.Fatal(err)
	}
	task, err := server.Create(ledger.CreateParams{})
	if err != nil {
		t.Fatalf("create after the restore: %v", err)
	}
	var seq int64
	if err := conn.QueryRow(ctx, `SELECT sequence FROM moved.task_events WHERE task_id = $1`, task.ID).Scan(&seq); err != nil || seq <= largest {
		t.Fatalf("the first event after the restore has sequence %d (%v), the restored ones reach %d", seq, err, largest)
	}
}

// TestRestoreRefusals: a restore into a server ledger that holds a task,
// and one from a backup the doctor does not call healthy, are refused
// with their reasons and load nothing; the second makes no schema.
func TestRestoreRefusals(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	dir := t.TempDir()
	backup := filepath.Join(dir, "backup.sqlite")
	fileLedger(t, backup, func(file *ledger.Ledger, now *float64) { doctorSequence(t, file, now) })
	conn := direct(t, url)
	count := func(schema string) (tasks, events int) {
		t.Helper()
		s := pgx.Identifier{schema}.Sanitize()
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+s+`.tasks), (SELECT count(*) FROM `+s+`.task_events)`).Scan(&tasks, &events); err != nil {
			t.Fatal(err)
		}
		return tasks, events
	}

	occupied := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "occupied"})
	if _, err := occupied.Create(ledger.CreateParams{}); err != nil {
		t.Fatal(err)
	}
	_, err := restore(ctx, url, backup, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "occupied"})
	if !errors.Is(err, ledger.ErrStateConflict) || ledger.Reason(err) != "database ledger is not empty" {
		t.Fatalf("restore into a ledger holding a task: %v", err)
	}
	if tasks, events := count("occupied"); tasks != 1 || events != 1 {
		t.Fatalf("the refused restore left %d tasks, %d events; want the one task", tasks, events)
	}

	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(backup))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
		SELECT id, 'task_transition', 'queued', 'running', 1, 'started' FROM tasks WHERE parent_id IS NULL`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = restore(ctx, url, backup, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "unhealthy"})
	if !errors.Is(err, ledger.ErrStateConflict) || ledger.Reason(err) != "backup is not a healthy ledger" {
		t.Fatalf("restore from an unhealthy backup: %v", err)
	}
	// The backup is judged before the server is touched: the schema
	// the restore would have made does not exist.
	var made bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = 'unhealthy')`).Scan(&made); err != nil {
		t.Fatal(err)
	}
	if made {
		t.Fatal("the refused restore made the ledger's schema")
	}
}

// TestBackupRefusesABrokenServerLedger: a server ledger the doctor does
// not call healthy (a row that breaks the rules; a grant to PUBLIC,
// which fails quick_check) is never backed up: the backup is refused as
// SQLite's backup refuses a damaged copy, and leaves no file.
func TestBackupRefusesABrokenServerLedger(t *testing.T) {
	url := pgtest.Database(t)
	for i, damage := range []string{
		`INSERT INTO %s.task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT id, 'task_transition', 'queued', 'running', 1, 'started' FROM %[1]s.tasks WHERE parent_id IS NULL`,
		`GRANT SELECT ON %s.task_events TO PUBLIC`,
	} {
		schema := fmt.Sprintf("broken_%d", i)
		l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema})
		root, err := l.Create(ledger.CreateParams{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Create(ledger.CreateParams{ParentID: root.ID}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := l.Backup(filepath.Join(dir, "sound.sqlite")); err != nil {
			t.Fatalf("backup before the damage: %v", err)
		}
		exec(t, url, fmt.Sprintf(damage, pgx.Identifier{schema}.Sanitize()))
		_, err = l.Backup(filepath.Join(dir, "broken.sqlite"))
		if !errors.Is(err, ledger.ErrStateConflict) || ledger.Reason(err) != "database file is not a valid ledger" {
			t.Fatalf("backup after %q: %v", damage, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("the refused backup left files: %v", entries)
		}
	}
}

// TestRestoreOfAnOldLedger: a backup in the old format (schema v1: the
// reference's v1-safe fixture) is loaded into the server as ledger.Restore
// installs it in a file, after the migration the SQLite engine's
// writable open makes: the same counts, the server's rows those of the
// restored file (the migration writes only schema_meta), the same
// healthy doctor report at schema version 2, and the backup's bytes
// unchanged (it is read, never migrated in place). The unsafe v1 fixture
// (a code outside the registry), which the migration refuses, is refused
// with ledger.Restore's class and reason, and no schema is made.
func TestRestoreOfAnOldLedger(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	dir := t.TempDir()
	opts := ledger.Options{AllowExternalACL: onWindows}
	fixture := func(name string) (string, []byte) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "spec", "testdata", "fixtures", "ledger", name+".sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".sqlite")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path, b
	}

	safe, original := fixture("v1-safe")
	rep, err := restore(ctx, url, safe, opts, settings{schema: "old"})
	if err != nil {
		t.Fatalf("restore of a v1 backup into the server: %v", err)
	}
	if now, err := os.ReadFile(safe); err != nil || !bytes.Equal(now, original) {
		t.Fatalf("the restore changed the v1 backup (%v)", err)
	}
	file := filepath.Join(dir, "restored.sqlite")
	want, err := ledger.Restore(file, safe, opts)
	if err != nil {
		t.Fatalf("the same backup restored into a file: %v", err)
	}
	if rep.TaskCount != want.TaskCount || rep.EventCount != want.EventCount || rep.Bytes != int64(len(original)) {
		t.Fatalf("restore report %+v; into a file %+v, the backup is %d bytes", rep, want, len(original))
	}
	conn := direct(t, url)
	if got, want := serverRows(t, conn, "old"), fileRows(t, file); got != want {
		t.Fatalf("rows on the server\n%s\nrows of the file restored from the same backup\n%s", got, want)
	}
	restored, err := ledger.Open(file, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	wantDoctor, err := restored.Doctor()
	if err != nil || !wantDoctor.Healthy || wantDoctor.SchemaVersion != 2 {
		t.Fatalf("doctor of the file restored from the v1 backup: %s, %v", reportJSON(t, wantDoctor), err)
	}
	server := openForTest(t, url, opts, settings{schema: "old"})
	if got, err := server.Doctor(); err != nil || reportJSON(t, got) != reportJSON(t, wantDoctor) {
		t.Fatalf("doctor on the server after the restore\n%s (%v)\non the restored file\n%s", reportJSON(t, got), err, reportJSON(t, wantDoctor))
	}

	unsafe, _ := fixture("v1-unsafe")
	_, ferr := ledger.Restore(filepath.Join(dir, "refused.sqlite"), unsafe, opts)
	_, serr := restore(ctx, url, unsafe, opts, settings{schema: "unsafe"})
	if !errors.Is(ferr, ledger.ErrStateConflict) || !errors.Is(serr, ledger.ErrStateConflict) || ledger.Reason(serr) != ledger.Reason(ferr) {
		t.Fatalf("restore of an unsafe v1 backup: into the server %v, into a file %v", serr, ferr)
	}
	var made bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = 'unsafe')`).Scan(&made); err != nil {
		t.Fatal(err)
	}
	if made {
		t.Fatal("the refused restore made the ledger's schema")
	}
}
