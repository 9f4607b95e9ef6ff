package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
)

// schemaFingerprint is the catalog fingerprint (fingerprint) of the
// schema schemaDDL makes, on PostgreSQL 15.
const schemaFingerprint = "ad32a61aa8822cc95a7da7bc2a38b110b21e23a3a8e72764085a3282c6f7d03a"

// schemaDDL is the ledger's schema on PostgreSQL: the tables and columns of
// spec 9.1 with PostgreSQL's types, and an index of events by task (the
// events' foreign key is checked on every delete of a task).
var schemaDDL = []string{
	`CREATE TABLE schema_meta (key text PRIMARY KEY, value text NOT NULL)`,
	`CREATE TABLE tasks (
		id text PRIMARY KEY,
		parent_id text REFERENCES tasks(id),
		status text NOT NULL CHECK (status IN ('queued','running','succeeded','failed','timed_out','cancelled')),
		delivery_status text NOT NULL CHECK (delivery_status IN ('pending','delivered','failed','not_applicable')),
		delivery_required integer NOT NULL CHECK (delivery_required IN (0,1)),
		payload_hash text CHECK (payload_hash IS NULL OR payload_hash ~ '^[0-9a-f]{64}$'),
		timeout_seconds double precision CHECK (timeout_seconds IS NULL OR timeout_seconds >= 0),
		created_at double precision NOT NULL,
		started_at double precision,
		updated_at double precision NOT NULL,
		ended_at double precision,
		deadline_at double precision,
		delivery_updated_at double precision NOT NULL,
		terminal_code text,
		delivery_code text,
		version bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
		CHECK (parent_id IS NULL OR parent_id <> id),
		CHECK (deadline_at IS NULL OR started_at IS NOT NULL),
		CHECK ((status IN ('queued','running') AND ended_at IS NULL) OR (status IN ('succeeded','failed','timed_out','cancelled') AND ended_at IS NOT NULL)))`,
	`CREATE TABLE task_events (
		sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		task_id text NOT NULL REFERENCES tasks(id),
		event_kind text NOT NULL CHECK (event_kind IN ('created','task_transition','delivery_transition')),
		from_value text,
		to_value text NOT NULL,
		occurred_at double precision NOT NULL,
		code text)`,
	`CREATE INDEX tasks_parent_idx ON tasks(parent_id)`,
	`CREATE INDEX tasks_status_idx ON tasks(status, updated_at)`,
	`CREATE INDEX tasks_delivery_idx ON tasks(delivery_status, ended_at)`,
	`CREATE INDEX task_events_task_idx ON task_events(task_id, sequence)`,
}

// ensureSchema checks the ledger's schema, making it first when the
// database has none and the store may write and need not find one.
// Workers that meet an empty database together make it once: the
// advisory lock serialises them.
func (e *store) ensureSchema(ctx context.Context) error {
	mayCreate := !e.readOnly && !e.mustExist
	return e.inTx(ctx, !mayCreate, func(tx pgx.Tx) error {
		if mayCreate {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('task_state_guard schema ' || $1::text))`, e.schema); err != nil {
				return fault(ctx, "make schema", err)
			}
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, e.schema).Scan(&exists); err != nil {
			return fault(ctx, "read schema", err)
		}
		if !exists {
			if !mayCreate {
				return serverstore.ErrNoLedger
			}
			if err := makeSchema(ctx, tx, e.schema); err != nil {
				return fault(ctx, "make schema", err)
			}
		}
		if err := checkAccess(ctx, tx, e.schema); err != nil {
			return err
		}
		return checkSchema(ctx, tx, e.schema)
	})
}

// checkAccess is the storage boundary's counterpart on a server (the
// SQLite engine's private directory and file): the schema and every
// relation in it are owned by the connecting role, and nothing of it (the
// schema, a relation, a column) is granted to another role or to PUBLIC.
// Another owner could change the tables under the rules (drop a check,
// disable a trigger); a grant lets another role write rows past the rules
// or read the ids. Membership in the connecting role is not looked at:
// a role that may act as it is it, as a process of the file's owner is.
func checkAccess(ctx context.Context, tx pgx.Tx, schema string) error {
	var foreignOwner, granted bool
	err := tx.QueryRow(ctx, `
		WITH me AS (SELECT (SELECT oid FROM pg_roles WHERE rolname = current_user) AS oid),
		ns AS (SELECT oid, nspowner, nspacl FROM pg_namespace WHERE nspname = $1),
		rel AS (SELECT c.oid, c.relowner, c.relacl FROM pg_class c JOIN ns ON c.relnamespace = ns.oid)
		SELECT
			EXISTS (SELECT 1 FROM ns, me WHERE ns.nspowner IS DISTINCT FROM me.oid)
				OR EXISTS (SELECT 1 FROM rel, me WHERE rel.relowner IS DISTINCT FROM me.oid),
			EXISTS (SELECT 1 FROM ns, aclexplode(ns.nspacl) a WHERE a.grantee <> ns.nspowner)
				OR EXISTS (SELECT 1 FROM rel, aclexplode(rel.relacl) a WHERE a.grantee <> rel.relowner)
				OR EXISTS (SELECT 1 FROM rel JOIN pg_attribute t ON t.attrelid = rel.oid, aclexplode(t.attacl) a
					WHERE a.grantee <> rel.relowner)`, schema).Scan(&foreignOwner, &granted)
	switch {
	case err != nil:
		return fault(ctx, "read schema", err)
	case foreignOwner:
		return serverstore.ErrForeignOwner
	case granted:
		return serverstore.ErrGranted
	}
	return nil
}

func makeSchema(ctx context.Context, tx pgx.Tx, schema string) error {
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return err
	}
	for _, ddl := range schemaDDL {
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return err
		}
	}
	fp, err := fingerprint(ctx, tx, schema)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO schema_meta (key, value) VALUES ('schema_version', '2'), ('schema_fingerprint', $1)`, fp)
	return err
}

// checkSchema refuses a schema that is not exactly the ledger's: its
// catalog fingerprint must be the one this package makes and the one the
// metadata records, beside version 2 and nothing else.
func checkSchema(ctx context.Context, tx pgx.Tx, schema string) error {
	fp, err := fingerprint(ctx, tx, schema)
	if err != nil {
		return fault(ctx, "read schema", err)
	}
	if fp != schemaFingerprint {
		return serverstore.ErrSchemaMismatch
	}
	rows, err := tx.Query(ctx, `SELECT key, value FROM schema_meta ORDER BY key`)
	if err != nil {
		return fault(ctx, "read schema", err)
	}
	meta, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ K, V string }])
	if err != nil {
		return fault(ctx, "read schema", err)
	}
	if len(meta) != 2 || meta[0].K != "schema_fingerprint" || meta[0].V != fp || meta[1].K != "schema_version" || meta[1].V != "2" {
		return serverstore.ErrSchemaMismatch
	}
	return nil
}

// fingerprint is the SHA-256 of the schema as the catalog describes it:
// every relation with its kind, every column with its type, nullability,
// default and identity, every constraint's and index's definition (the
// schema's own name left out, so a configured name gives the same value),
// one line each, sorted by bytes.
func fingerprint(ctx context.Context, tx pgx.Tx, schema string) (string, error) {
	rows, err := tx.Query(ctx, `
		SELECT 'relation ' || c.relname || ' ' || c.relkind::text
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
		UNION ALL
		SELECT 'column ' || c.relname || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' ||
			a.attnotnull::text || ' ' || a.attidentity::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT 'constraint ' || c.relname || ' ' || k.contype::text || ' ' || pg_get_constraintdef(k.oid)
		FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1
		UNION ALL
		SELECT 'index ' || replace(pg_get_indexdef(i.indexrelid), quote_ident($1) || '.', '')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1`, schema)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:]), nil
}
