package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// schemaFingerprint is the fingerprint of schema v2 (spec/task-state-guard.md §9.2).
const schemaFingerprint = "50ae209ec97afb360e142cfae85767f575acc2a065103f5b642bfd0c141e08f6"

// schemaDDL is the schema, statement by statement, in the reference
// ledger's exact text (whitespace included), so a file created here has the
// same sqlite_master text as one the reference creates.
var schemaDDL = []string{
	`CREATE TABLE schema_meta (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                )`,
	`CREATE TABLE tasks (
                    id TEXT PRIMARY KEY,
                    parent_id TEXT REFERENCES tasks(id),
                    status TEXT NOT NULL CHECK (
                        status IN ('queued','running','succeeded','failed','timed_out','cancelled')
                    ),
                    delivery_status TEXT NOT NULL CHECK (
                        delivery_status IN ('pending','delivered','failed','not_applicable')
                    ),
                    delivery_required INTEGER NOT NULL CHECK (delivery_required IN (0,1)),
                    payload_hash TEXT CHECK (
                        payload_hash IS NULL OR (
                            length(payload_hash) = 64 AND
                            payload_hash NOT GLOB '*[^0-9a-f]*'
                        )
                    ),
                    timeout_seconds REAL CHECK (timeout_seconds IS NULL OR timeout_seconds >= 0),
                    created_at REAL NOT NULL,
                    started_at REAL,
                    updated_at REAL NOT NULL,
                    ended_at REAL,
                    deadline_at REAL,
                    delivery_updated_at REAL NOT NULL,
                    terminal_code TEXT,
                    delivery_code TEXT,
                    version INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0),
                    CHECK (parent_id IS NULL OR parent_id <> id),
                    CHECK (deadline_at IS NULL OR started_at IS NOT NULL),
                    CHECK (
                        (status IN ('queued','running') AND ended_at IS NULL) OR
                        (status IN ('succeeded','failed','timed_out','cancelled')
                         AND ended_at IS NOT NULL)
                    )
                )`,
	`CREATE TABLE task_events (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    task_id TEXT NOT NULL REFERENCES tasks(id),
                    event_kind TEXT NOT NULL CHECK (
                        event_kind IN ('created','task_transition','delivery_transition')
                    ),
                    from_value TEXT,
                    to_value TEXT NOT NULL,
                    occurred_at REAL NOT NULL,
                    code TEXT
                )`,
	`CREATE INDEX tasks_parent_idx ON tasks(parent_id)`,
	`CREATE INDEX tasks_status_idx ON tasks(status, updated_at)`,
	`CREATE INDEX tasks_delivery_idx ON tasks(delivery_status, ended_at)`,
}

// schemaObject is one fingerprinted sqlite_master row.
type schemaObject struct{ typ, name, tblName, sql string }

// collapseSpace replaces every run of whitespace with one space.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteRune(r)
			space = false
		}
	}
	return b.String()
}

// lastFingerprint is the objects fingerprint last computed and their
// fingerprint. Every open and every doctor reads the schema again, nearly
// always the same objects, and computing the fingerprint (collapsing the
// whitespace of the DDL, JSON, SHA-256) was half of readSchema's time and
// a noticeable share of a read-only open with a doctor.
var lastFingerprint struct {
	sync.Mutex
	valid   bool
	objects []schemaObject
	sum     string
}

// fingerprint is computeFingerprint(objects), remembered for the last
// objects it was asked about.
func fingerprint(objects []schemaObject) string {
	m := &lastFingerprint
	m.Lock()
	if m.valid && slices.Equal(m.objects, objects) {
		sum := m.sum
		m.Unlock()
		return sum
	}
	m.Unlock()
	sum := computeFingerprint(objects)
	m.Lock()
	m.valid, m.objects, m.sum = true, slices.Clone(objects), sum
	m.Unlock()
	return sum
}

// computeFingerprint computes the schema fingerprint of objects (spec/task-state-guard.md §9.2):
// SHA-256 of the compact JSON list of [type, name, tbl_name, sql] ordered
// by type then name.
func computeFingerprint(objects []schemaObject) string {
	sorted := append([]schemaObject(nil), objects...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].typ != sorted[j].typ {
			return sorted[i].typ < sorted[j].typ
		}
		return sorted[i].name < sorted[j].name
	})
	rows := make([][4]string, len(sorted))
	for i, o := range sorted {
		rows[i] = [4]string{o.typ, o.name, o.tblName, collapseSpace(o.sql)}
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j, s := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			b.Write(pyjson.AppendASCIIString(nil, s))
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// expectedObjects are the schema objects as this package creates them.
func expectedObjects() []schemaObject {
	names := []schemaObject{
		{"table", "schema_meta", "schema_meta", ""},
		{"table", "tasks", "tasks", ""},
		{"table", "task_events", "task_events", ""},
		{"index", "tasks_parent_idx", "tasks", ""},
		{"index", "tasks_status_idx", "tasks", ""},
		{"index", "tasks_delivery_idx", "tasks", ""},
	}
	for i := range names {
		names[i].sql = schemaDDL[i]
	}
	return names
}

// schemaStatus is what validation found in a file.
type schemaStatus struct {
	empty       bool   // no objects at all: a fresh file
	version     int    // parsed schema_version; 0 when absent or malformed
	exact       bool   // objects, fingerprint and metadata exactly v1 or v2
	fingerprint string // computed over the stored objects
	v1Unsafe    bool   // an exact v1 whose content cannot migrate (read-only only)
}

// okV2 reports an exact schema v2.
func (s schemaStatus) okV2() bool { return s.exact && s.version == 2 }

// okV1 reports an exact schema v1 (migratable when its content is safe).
func (s schemaStatus) okV1() bool { return s.exact && s.version == 1 }

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readSchema inspects sqlite_master and schema_meta and classifies the file.
// Internal objects (names starting with "sqlite_") are managed by SQLite
// and are not part of the comparison.
func readSchema(ctx context.Context, q querier) (schemaStatus, error) {
	var st schemaStatus
	rows, err := q.QueryContext(ctx, `SELECT type, name, tbl_name, sql FROM sqlite_master`)
	if err != nil {
		return st, err
	}
	var objects []schemaObject
	total := 0
	for rows.Next() {
		var typ, name, tbl string
		var text sql.NullString
		if err := rows.Scan(&typ, &name, &tbl, &text); err != nil {
			rows.Close()
			return st, err
		}
		total++
		if strings.HasPrefix(name, "sqlite_") || !text.Valid {
			continue
		}
		objects = append(objects, schemaObject{typ, name, tbl, text.String})
	}
	if err := rows.Close(); err != nil {
		return st, err
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	if total == 0 {
		st.empty = true
		return st, nil
	}
	st.fingerprint = fingerprint(objects)
	sameObjects := len(objects) == len(expectedObjects())
	if sameObjects {
		want := map[[3]string]bool{}
		for _, o := range expectedObjects() {
			want[[3]string{o.typ, o.name, o.tblName}] = true
		}
		for _, o := range objects {
			if !want[[3]string{o.typ, o.name, o.tblName}] {
				sameObjects = false
			}
		}
	}
	hasMeta := false
	for _, o := range objects {
		if o.typ == "table" && o.name == "schema_meta" {
			hasMeta = true
		}
	}
	if !hasMeta {
		return st, nil
	}
	meta, err := readMeta(ctx, q)
	if err != nil {
		if sameObjects && st.fingerprint == schemaFingerprint {
			return st, err // the schema is right, so this is a real failure
		}
		// A damaged schema_meta (a renamed column, say) is part of the
		// schema damage: report it as not exact, version unknown.
		return st, nil
	}
	switch meta["schema_version"] {
	case "1":
		st.version = 1
	case "2":
		st.version = 2
	}
	if !sameObjects || st.fingerprint != schemaFingerprint {
		return st, nil
	}
	switch st.version {
	case 1:
		st.exact = len(meta) == 1
	case 2:
		st.exact = len(meta) == 2 && meta["schema_fingerprint"] == schemaFingerprint
	}
	return st, nil
}

// readMeta returns the schema_meta table. Non-text keys or values are kept
// under a key that can never be valid so that the file fails validation.
func readMeta(ctx context.Context, q querier) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM schema_meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	meta := map[string]string{}
	n := 0
	for rows.Next() {
		var k, v any
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		n++
		ks, kok := k.(string)
		vs, vok := v.(string)
		if !kok || !vok {
			meta["\x00invalid"+string(rune('0'+n%10))] = ""
			continue
		}
		meta[ks] = vs
	}
	return meta, rows.Err()
}

// createSchema writes the v2 schema and its metadata into an empty file.
func createSchema(ctx context.Context, tx execer) error {
	for _, ddl := range schemaDDL {
		if _, err := tx.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO schema_meta (key, value) VALUES ('schema_version', '2'), ('schema_fingerprint', ?)`,
		schemaFingerprint)
	return err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// v1MigrationSafe reports whether every stored code and event of a v1 file
// already matches the registry for its state (spec/task-state-guard.md §9.5). Nullable columns
// are compared with IS or coalesce: a NULL from_value would make a plain
// comparison NULL, and NOT NULL would let the row through uncounted.
func v1MigrationSafe(ctx context.Context, q execer) (bool, error) {
	var bad int
	err := q.QueryRowContext(ctx, `SELECT
	  (SELECT count(*) FROM tasks WHERE terminal_code IS NOT NULL AND NOT (`+registrySQL("status", "terminal_code", taskCodes)+`))
	+ (SELECT count(*) FROM tasks WHERE delivery_code IS NOT NULL AND NOT (`+registrySQL("delivery_status", "delivery_code", deliveryCodes)+`))
	+ (SELECT count(*) FROM task_events WHERE NOT (
	      (event_kind = 'created' AND from_value IS NULL AND to_value = 'queued' AND code IS 'created')
	   OR (event_kind = 'task_transition' AND from_value IS 'queued' AND to_value = 'running' AND code IS 'started')
	   OR (event_kind = 'task_transition' AND coalesce(from_value, '') IN ('queued','running') AND to_value IN ('succeeded','failed','timed_out','cancelled')
	       AND (code IS NULL OR `+registrySQL("to_value", "code", taskCodes)+`))
	   OR (event_kind = 'delivery_transition' AND from_value IS 'pending' AND to_value IN ('delivered','failed','not_applicable')
	       AND (code IS NULL OR `+registrySQL("to_value", "code", deliveryCodes)+`))))`).Scan(&bad)
	return bad == 0, err
}

// registrySQL renders a registry as an SQL condition over two columns.
func registrySQL(stateCol, codeCol string, registry map[string][]string) string {
	states := make([]string, 0, len(registry))
	for s := range registry {
		states = append(states, s)
	}
	sort.Strings(states)
	var parts []string
	for _, s := range states {
		quoted := make([]string, len(registry[s]))
		for i, c := range registry[s] {
			quoted[i] = "'" + c + "'"
		}
		parts = append(parts, "("+stateCol+" = '"+s+"' AND "+codeCol+" IN ("+strings.Join(quoted, ",")+"))")
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// schemaAfterMigration reads the schema of t's file as a writable open
// would leave it (spec 9.5): an exact v1 whose content is safe to migrate
// reads as the v2 its migration makes (the DDL is the same, and the
// migration writes only schema_meta's rows); anything else as it is.
func schemaAfterMigration(t *txn) (schemaStatus, error) {
	st, err := readSchema(t.ctx, t)
	if err != nil || !st.okV1() {
		return st, err
	}
	safe, err := v1MigrationSafe(t.ctx, t)
	if err != nil || !safe {
		return st, err
	}
	st.version = 2
	return st, nil
}

// migrateV1 adds the fingerprint and bumps the version, inside the caller's
// write transaction.
func migrateV1(ctx context.Context, tx execer) error {
	if _, err := tx.ExecContext(ctx, `UPDATE schema_meta SET value = '2' WHERE key = 'schema_version'`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO schema_meta (key, value) VALUES ('schema_fingerprint', ?)`, schemaFingerprint)
	return err
}
