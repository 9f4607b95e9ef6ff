package ledger

// The ledger on PostgreSQL (docs/design/ledger-on-postgresql.md). Unexported
// until every operation works on it: nothing outside the package's tests
// can open it. It shares the rules (id parsing, codes, the row checks, the
// clock-backwards rule) with the SQLite engine and none of its SQL.

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgDefaultSchema is the PostgreSQL schema that holds the ledger unless
// configured.
const pgDefaultSchema = "task_state_guard"

// pgSchemaFingerprint is the catalog fingerprint (pgFingerprint) of the
// schema pgSchemaDDL makes, on PostgreSQL 15.
const pgSchemaFingerprint = "ad32a61aa8822cc95a7da7bc2a38b110b21e23a3a8e72764085a3282c6f7d03a"

// pgSchemaDDL is the ledger's schema on PostgreSQL: spec 9.1's tables and
// columns with PostgreSQL's types, and an index of events by task (the
// events' foreign key is checked on every delete of a task).
var pgSchemaDDL = []string{
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

// pgEngine is one open ledger on PostgreSQL: one connection, its calls one
// at a time.
type pgEngine struct {
	mu     sync.Mutex
	conn   *pgx.Conn
	schema string
	// testClock, when set, replaces the server's clock (tests and the
	// command line's test clock). The hosts' clocks are never read.
	testClock Clock
	busyMS    int
	newID     func() (string, error)
	closed    bool
}

// pgSettings are the PostgreSQL engine's own settings beside Options.
type pgSettings struct {
	schema    string // "" is pgDefaultSchema
	testClock Clock
}

// openPostgres connects to url and checks, or makes, the ledger's schema.
// opts.Clock is ignored: the time comes from the server (one clock for
// every host); opts.BusyTimeoutMS bounds every wait; opts.NewID as on
// SQLite.
func openPostgres(ctx context.Context, url string, opts Options, s pgSettings) (*pgEngine, error) {
	if opts.BusyTimeoutMS < 0 {
		return nil, invalidInput("busy timeout must not be negative")
	}
	if opts.BusyTimeoutMS == 0 {
		opts.BusyTimeoutMS = defaultBusyTimeoutMS
	}
	if s.schema == "" {
		s.schema = pgDefaultSchema
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, invalidInput("database URL is not valid")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, pgFault("connect", err)
	}
	e := &pgEngine{conn: conn, schema: s.schema, testClock: s.testClock, busyMS: opts.BusyTimeoutMS, newID: opts.NewID}
	if e.newID == nil {
		e.newID = randomTaskID
	}
	if err := e.ensureSchema(ctx, !opts.ReadOnly); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return e, nil
}

// close ends the connection; later calls answer ErrClosed.
func (e *pgEngine) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return e.conn.Close(context.Background())
}

// pgFault maps a driver failure to the ledger's answer. The driver's own
// text names the server, the user and the database, so only the SQLSTATE
// travels on, never the message.
func pgFault(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *classError
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &cancelledError{cause: err}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "55P03", "57014", "40P01": // lock_not_available, query_canceled (the timeouts), deadlock_detected
			return errBusy
		}
		return internal(op, fmt.Errorf("postgresql error %s", pe.Code))
	}
	return internal(op, errors.New("postgresql connection failed"))
}

// pgTx runs fn in one READ COMMITTED transaction with the ledger's schema
// first on the search path and every wait bounded by the busy timeout.
func (e *pgEngine) pgTx(ctx context.Context, readOnly bool, fn func(pgx.Tx) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	if readOnly {
		opts = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	}
	tx, err := e.conn.BeginTx(ctx, opts)
	if err != nil {
		return pgFault("begin", err)
	}
	defer tx.Rollback(context.Background())
	timeout := strconv.Itoa(e.busyMS)
	if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true), set_config('lock_timeout', $2, true), set_config('statement_timeout', $2, true)`,
		pgx.Identifier{e.schema}.Sanitize(), timeout); err != nil {
		return pgFault("begin", err)
	}
	if err := fn(tx); err != nil {
		return pgFault("write", err)
	}
	return pgFault("commit", tx.Commit(ctx))
}

// ensureSchema checks the ledger's schema, making it first when the
// database has none and the ledger may write. Workers that meet an empty
// database together make it once: the advisory lock serialises them.
func (e *pgEngine) ensureSchema(ctx context.Context, mayCreate bool) error {
	return e.pgTx(ctx, !mayCreate, func(tx pgx.Tx) error {
		if mayCreate {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('task_state_guard schema ' || $1::text))`, e.schema); err != nil {
				return err
			}
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, e.schema).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if !mayCreate {
				return stateConflict("schema does not match")
			}
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{e.schema}.Sanitize()); err != nil {
				return err
			}
			for _, ddl := range pgSchemaDDL {
				if _, err := tx.Exec(ctx, ddl); err != nil {
					return err
				}
			}
			fp, err := pgFingerprint(ctx, tx, e.schema)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_meta (key, value) VALUES ('schema_version', '2'), ('schema_fingerprint', $1)`, fp); err != nil {
				return err
			}
		}
		return pgCheckSchema(ctx, tx, e.schema)
	})
}

// pgCheckSchema refuses a schema that is not exactly the ledger's: its
// catalog fingerprint must be the one the metadata records and the one
// this package makes.
func pgCheckSchema(ctx context.Context, tx pgx.Tx, schema string) error {
	fp, err := pgFingerprint(ctx, tx, schema)
	if err != nil {
		return err
	}
	if fp != pgSchemaFingerprint {
		return stateConflict("schema does not match")
	}
	rows, err := tx.Query(ctx, `SELECT key, value FROM schema_meta ORDER BY key`)
	if err != nil {
		return err
	}
	meta, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ K, V string }])
	if err != nil {
		return err
	}
	if len(meta) != 2 || meta[0].K != "schema_fingerprint" || meta[0].V != fp || meta[1].K != "schema_version" || meta[1].V != "2" {
		return stateConflict("schema does not match")
	}
	return nil
}

// pgFingerprint is the SHA-256 of the schema as the catalog describes it:
// every relation with its kind, every column with its type, nullability,
// default and identity, every constraint's and index's definition (the
// schema's own name left out, so a configured name gives the same value),
// one line each, sorted by bytes.
func pgFingerprint(ctx context.Context, tx pgx.Tx, schema string) (string, error) {
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

// pgTaskColumns selects a task's columns in scanTask's order, with the
// integer flag widened to the type the row checks expect.
const pgTaskColumns = `id, parent_id, status, delivery_status, delivery_required::bigint, payload_hash,
	timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at,
	delivery_updated_at, terminal_code, delivery_code, version`

// pgGetTask reads one task (locking its row with lock, "" for none) and
// checks it as the SQLite engine does (spec 6.8).
func pgGetTask(ctx context.Context, tx pgx.Tx, id, lock string) (Task, error) {
	rows, err := tx.Query(ctx, `SELECT `+pgTaskColumns+` FROM tasks WHERE id = $1 `+lock, id)
	if err != nil {
		return Task{}, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return Task{}, err
		}
		return Task{}, taskNotFound("task does not exist")
	}
	vals, err := rows.Values()
	if err != nil {
		return Task{}, err
	}
	row := make([]driver.Value, len(vals))
	for i, v := range vals {
		row[i] = v
	}
	return taskFromRow(row)
}

// now is the operation's time: the server's clock, read inside the
// transaction after its locks are held (clock_timestamp, not the
// transaction's start), unless a test clock is set.
func (e *pgEngine) now(ctx context.Context, tx pgx.Tx) (float64, error) {
	if e.testClock != nil {
		now := e.testClock()
		if math.IsNaN(now) || math.IsInf(now, 0) {
			return 0, internal("read clock", errors.New("clock returned a non-finite time"))
		}
		return now, nil
	}
	var now float64
	err := tx.QueryRow(ctx, `SELECT extract(epoch FROM clock_timestamp())::double precision`).Scan(&now)
	return now, err
}

// pgAddEvent appends one event row.
func pgAddEvent(ctx context.Context, tx pgx.Tx, taskID, kind string, from any, to string, at float64, code any) error {
	_, err := tx.Exec(ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES ($1, $2, $3, $4, $5, $6)`,
		taskID, kind, from, to, at, code)
	return err
}

// get returns one task.
func (e *pgEngine) get(ctx context.Context, id string) (Task, error) {
	cid, err := ParseTaskID(id)
	if err != nil {
		return Task{}, err
	}
	var out Task
	err = e.pgTx(ctx, true, func(tx pgx.Tx) error {
		out, err = pgGetTask(ctx, tx, cid, "")
		return err
	})
	return out, err
}

// create adds a queued task, or returns the stored one when the same id
// exists with the same parameters (spec 6.1).
func (e *pgEngine) create(ctx context.Context, p CreateParams) (Task, error) {
	var id, parent string
	var err error
	if p.TaskID != "" {
		if id, err = ParseTaskID(p.TaskID); err != nil {
			return Task{}, err
		}
	}
	if p.ParentID != "" {
		if parent, err = ParseTaskID(p.ParentID); err != nil {
			return Task{}, err
		}
	}
	if p.PayloadHash != "" && !ValidPayloadHash(p.PayloadHash) {
		return Task{}, invalidInput("payload hash must be 64 lowercase hex characters")
	}
	if p.TimeoutSeconds != nil && !validSeconds(*p.TimeoutSeconds) {
		return Task{}, invalidInput("timeout must be a finite, non-negative number")
	}
	if p.TimeoutSeconds != nil {
		// SQLite stores a negative zero as zero; double precision keeps
		// the sign, which would then show in the task's JSON.
		v := *p.TimeoutSeconds + 0
		p.TimeoutSeconds = &v
	}
	var out Task
	err = e.pgTx(ctx, false, func(tx pgx.Tx) error {
		if id == "" {
			fresh, err := e.newID()
			if err != nil {
				return err
			}
			if !isCanonicalID(fresh) {
				return internal("new id", errors.New("id source returned a non-canonical id"))
			}
			id = fresh
		}
		// The id's lock first: a concurrent create of the same id waits
		// here and then finds the row.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('task_state_guard create ' || $1::text))`, id); err != nil {
			return err
		}
		existing, err := pgGetTask(ctx, tx, id, "FOR UPDATE")
		if err == nil {
			if sameString(existing.ParentID, parent) && sameString(existing.PayloadHash, p.PayloadHash) &&
				sameFloat(existing.TimeoutSeconds, p.TimeoutSeconds) && existing.DeliveryRequired == !p.Internal {
				out = existing
				return nil
			}
			return stateConflict("task exists with different parameters")
		}
		if !errors.Is(err, ErrTaskNotFound) {
			return err
		}
		var parentTask Task
		if parent != "" {
			if parentTask, err = pgGetTask(ctx, tx, parent, "FOR SHARE"); err != nil {
				return err
			}
		}
		now, err := e.now(ctx, tx)
		if err != nil {
			return err
		}
		if parent != "" {
			if err := notBefore(now, parentTask.CreatedAt); err != nil {
				return err
			}
		}
		required := 0
		if !p.Internal {
			required = 1
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tasks (id, parent_id, status, delivery_status, delivery_required, payload_hash,
			timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version)
			VALUES ($1, $2, 'queued', 'pending', $3, $4, $5, $6, NULL, $6, NULL, NULL, $6, NULL, NULL, 0)`,
			id, orNull(parent), required, orNull(p.PayloadHash), floatOrNull(p.TimeoutSeconds), now); err != nil {
			return err
		}
		if err := pgAddEvent(ctx, tx, id, eventCreated, nil, string(StatusQueued), now, codeCreated); err != nil {
			return err
		}
		out, err = pgGetTask(ctx, tx, id, "")
		return err
	})
	return out, err
}

// writeTask is the per-task operations' shape, as on SQLite: parse the id,
// run check, then in one transaction lock the task's row and let apply
// decide; apply reads the clock (after the lock) only when it writes.
func (e *pgEngine) writeTask(ctx context.Context, id string, check func() error, apply func(tx pgx.Tx, task Task) (changed bool, err error)) (Task, error) {
	cid, err := ParseTaskID(id)
	if err != nil {
		return Task{}, err
	}
	if check != nil {
		if err := check(); err != nil {
			return Task{}, err
		}
	}
	var out Task
	err = e.pgTx(ctx, false, func(tx pgx.Tx) error {
		task, err := pgGetTask(ctx, tx, cid, "FOR UPDATE")
		if err != nil {
			return err
		}
		changed, err := apply(tx, task)
		if err != nil || !changed {
			out = task
			return err
		}
		out, err = pgGetTask(ctx, tx, cid, "")
		return err
	})
	if err != nil {
		return Task{}, err
	}
	return out, nil
}

// start moves a queued task to running (spec 6.2).
func (e *pgEngine) start(ctx context.Context, id string) (Task, error) {
	return e.writeTask(ctx, id, nil, func(tx pgx.Tx, task Task) (bool, error) {
		if task.Status == StatusRunning {
			return false, nil
		}
		if task.Status != StatusQueued {
			return false, stateConflict("task is not queued")
		}
		now, err := e.now(ctx, tx)
		if err != nil {
			return false, err
		}
		if err := notBefore(now, task.CreatedAt, task.UpdatedAt); err != nil {
			return false, err
		}
		var deadline any
		if task.TimeoutSeconds != nil {
			d := now + *task.TimeoutSeconds
			if math.IsInf(d, 0) {
				return false, errDeadlineOverflow
			}
			deadline = d
		}
		if _, err := tx.Exec(ctx, `UPDATE tasks SET status = 'running', started_at = $1, updated_at = $1, deadline_at = $2, version = version + 1 WHERE id = $3`,
			now, deadline, task.ID); err != nil {
			return false, err
		}
		return true, pgAddEvent(ctx, tx, task.ID, eventTaskTransition, string(StatusQueued), string(StatusRunning), now, codeStarted)
	})
}

// heartbeat refreshes a running task's updated_at (spec 6.3).
func (e *pgEngine) heartbeat(ctx context.Context, id string) (Task, error) {
	return e.writeTask(ctx, id, nil, func(tx pgx.Tx, task Task) (bool, error) {
		if task.Status != StatusRunning {
			return false, stateConflict("task is not running")
		}
		now, err := e.now(ctx, tx)
		if err != nil {
			return false, err
		}
		if err := notBefore(now, task.UpdatedAt); err != nil {
			return false, err
		}
		_, err = tx.Exec(ctx, `UPDATE tasks SET updated_at = $1, version = version + 1 WHERE id = $2`, now, task.ID)
		return true, err
	})
}

// closeTask moves a task to a terminal state (spec 6.4).
func (e *pgEngine) closeTask(ctx context.Context, id string, status Status, code *string) (Task, error) {
	check := func() error {
		if !isTerminal(status) {
			return invalidInput("close status must be terminal")
		}
		return nil
	}
	return e.writeTask(ctx, id, check, func(tx pgx.Tx, task Task) (bool, error) {
		if task.Status == status {
			return false, nil
		}
		if isTerminal(task.Status) {
			return false, ErrAlreadyTerminal
		}
		if err := checkCode(code, taskCodeAllowed, string(status)); err != nil {
			return false, err
		}
		now, err := e.now(ctx, tx)
		if err != nil {
			return false, err
		}
		times := []float64{task.CreatedAt, task.UpdatedAt}
		if task.StartedAt != nil {
			times = append(times, *task.StartedAt)
		}
		if err := notBefore(now, times...); err != nil {
			return false, err
		}
		if _, err := tx.Exec(ctx, `UPDATE tasks SET status = $1, updated_at = $2, ended_at = $2, terminal_code = $3, version = version + 1 WHERE id = $4`,
			string(status), now, codeOrNull(code), task.ID); err != nil {
			return false, err
		}
		return true, pgAddEvent(ctx, tx, task.ID, eventTaskTransition, string(task.Status), string(status), now, codeOrNull(code))
	})
}

// setDelivery closes a terminal task's delivery (spec 6.5).
func (e *pgEngine) setDelivery(ctx context.Context, id string, status DeliveryStatus, code *string) (Task, error) {
	check := func() error {
		if status != DeliveryDelivered && status != DeliveryFailed && status != DeliveryNotApplicable {
			return invalidInput("delivery status must be terminal")
		}
		return nil
	}
	return e.writeTask(ctx, id, check, func(tx pgx.Tx, task Task) (bool, error) {
		if task.DeliveryStatus == status {
			return false, nil
		}
		if task.DeliveryStatus != DeliveryPending {
			return false, ErrDeliveryClosed
		}
		if task.DeliveryRequired == (status == DeliveryNotApplicable) {
			return false, stateConflict("delivery state not allowed for this kind of task")
		}
		if !isTerminal(task.Status) {
			return false, stateConflict("task is not terminal")
		}
		if err := checkCode(code, deliveryCodeAllowed, string(status)); err != nil {
			return false, err
		}
		now, err := e.now(ctx, tx)
		if err != nil {
			return false, err
		}
		times := []float64{task.CreatedAt, task.DeliveryUpdatedAt}
		if task.EndedAt != nil {
			times = append(times, *task.EndedAt)
		}
		if err := notBefore(now, times...); err != nil {
			return false, err
		}
		if _, err := tx.Exec(ctx, `UPDATE tasks SET delivery_status = $1, delivery_updated_at = $2, delivery_code = $3, version = version + 1 WHERE id = $4`,
			string(status), now, codeOrNull(code), task.ID); err != nil {
			return false, err
		}
		return true, pgAddEvent(ctx, tx, task.ID, eventDeliveryTransition, string(DeliveryPending), string(status), now, codeOrNull(code))
	})
}
