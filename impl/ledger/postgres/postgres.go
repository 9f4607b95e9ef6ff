// Package postgres holds a task ledger in PostgreSQL, for a ledger that
// several hosts share (docs/design/ledger-on-postgresql.md). It keeps rows
// only: package ledger applies every rule, through the same decisions and
// row checks as on SQLite, and returns the same *ledger.Ledger.
//
// The time of every operation is the server's, read inside its
// transaction after its locks are held, so hosts whose clocks differ
// agree; there is no counterpart of ledger.Options.Clock (Options.FixedClock
// is for tests). Every operation is one READ COMMITTED
// transaction that locks the rows it decides on, with lock_timeout and
// statement_timeout set to the busy timeout (answered as ledger.ErrBusy);
// work that can wait for nothing (after the table lock, reconcile's read)
// has no statement timeout.
// A driver failure is reduced to its SQLSTATE: the driver's text names
// the host, the user and the database, and never leaves this package.
//
// Open connects and returns the same *ledger.Ledger that ledger.Open
// returns for a file, so an embedder switches engines by configuration.
// The command line opens this engine when --db is a postgres:// or
// postgresql:// URL.
package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
	"github.com/stateguard/stateguard/impl/ledger/internal/ledgererr"
	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
)

// DefaultSchema is the PostgreSQL schema that holds the ledger unless
// configured.
const DefaultSchema = "task_state_guard"

// Options configure Open. The zero value opens the ledger in DefaultSchema
// with a busy timeout of 5 s, making the schema when the database has none.
type Options struct {
	// Schema is the PostgreSQL schema that holds the ledger's tables; ""
	// is the one the session's SchemaSetting names, else DefaultSchema.
	// Any name of 1 to 63 bytes without a NUL is taken as it is written
	// (quoted, case kept). Ledgers in different schemas of one database
	// are independent.
	Schema string
	// ReadOnly opens without creating anything; every write fails with
	// ledger.ErrStateConflict, and every read runs in a READ ONLY
	// transaction.
	ReadOnly bool
	// MustExist refuses a database whose schema does not exist
	// (ledger.ErrInvalidInput, "database does not exist") instead of
	// making it, as ledger.Options.MustExist refuses a missing file.
	MustExist bool
	// BusyTimeout bounds every wait for a lock or a statement before an
	// operation fails with ledger.ErrBusy; zero means 5 s. The server
	// counts it in whole milliseconds: a fraction is rounded up.
	BusyTimeout time.Duration
	// NewID returns the id of a task created without one, as in
	// ledger.Options.
	NewID func() (string, error)
	// AllowExternalACL is the Windows acknowledgement for the files a
	// server ledger opens beside the server: Backup's target and
	// Restore's backup, as ledger.Options.AllowExternalACL (it certifies
	// nothing; elsewhere it changes nothing). It accepts no grant on the
	// server: the schema's owner and grants are read and checked there
	// (spec 20.6).
	AllowExternalACL bool
	// FixedClock, when set, is read instead of the server's clock. It is
	// for tests and the command line's test clock: ledgers opened with it
	// no longer share the server's one clock. No host's clock is ever
	// read. The ledger stores the float nearest to each reading in Unix
	// seconds (SetFixedClockSeconds hands over the float itself).
	FixedClock ledger.Clock

	// fixedClockSeconds is the fixed clock in the stored form, set by
	// SetFixedClockSeconds; it takes the place of FixedClock.
	fixedClockSeconds func() float64
}

// SetFixedClockSeconds reads the time from clock, in Unix seconds of any
// finite size and detail, in place of FixedClock and of the server's
// clock, as ledger.Options.SetClockSeconds does for a file: the command
// line's test clock is such a float.
func (o *Options) SetFixedClockSeconds(clock func() float64) {
	o.fixedClockSeconds = clock
}

// testClock is the fixed clock in the stored form, or nil for the
// server's.
func (o Options) testClock() func() float64 {
	if o.fixedClockSeconds != nil {
		return o.fixedClockSeconds
	}
	if o.FixedClock == nil {
		return nil
	}
	clock := o.FixedClock
	return func() float64 { return floatseconds.UnixSeconds(clock()) }
}

// Open connects to the database that url names and opens the ledger in
// its schema; ctx bounds the connection and the schema's check. url is
// libpq's connection URI (postgres:// or postgresql://) or its
// keyword=value form, read by pgx with libpq's environment (PGHOST,
// PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGPASSFILE, PGSERVICE,
// PGSSLMODE and the other TLS settings). The ledger holds one connection
// until Close.
//
// No error names the URL, a host, a port, a user or a database: a URL
// pgx cannot read is ledger.ErrInvalidInput, a schema that is not the
// ledger's is ledger.ErrStateConflict, and a failure of the connection
// or the server is an internal error that keeps only the server's
// SQLSTATE.
func Open(ctx context.Context, url string, opts Options) (*ledger.Ledger, error) {
	if opts.Schema != "" && (len(opts.Schema) > maxIdentifierBytes || strings.IndexByte(opts.Schema, 0) >= 0) {
		return nil, invalidInput("schema name must be 1 to 63 bytes without NUL")
	}
	return open(ctx, url, ledgerOptions(opts), settings{schema: opts.Schema, testClock: opts.testClock()})
}

// ledgerOptions are the ledger's options of a server ledger opened with
// opts.
func ledgerOptions(opts Options) ledger.Options {
	return ledger.Options{ReadOnly: opts.ReadOnly, MustExist: opts.MustExist, BusyTimeout: opts.BusyTimeout, NewID: opts.NewID,
		AllowExternalACL: opts.AllowExternalACL}
}

func invalidInput(reason string) error { return ledgererr.InvalidInput(reason) }

// maxIdentifierBytes is PostgreSQL's identifier length (NAMEDATALEN-1):
// a longer name would be cut short by the server, and two schema names
// that differ only after it would name one schema.
const maxIdentifierBytes = 63

// settings are the engine's own settings beside ledger.Options.
type settings struct {
	// schema holds the ledger's tables; "" is the session's
	// SchemaSetting, else DefaultSchema.
	schema string
	// testClock, when set, replaces the server's clock (tests and the
	// command line's test clock), in Unix seconds. No host's clock is
	// ever read.
	testClock func() float64
	// tracer, when set, sees every statement of the connection (tests
	// count them).
	tracer pgx.QueryTracer
}

// open connects to url and opens the ledger in its schema, making the
// schema first when the database has none and the ledger may write.
func open(ctx context.Context, url string, opts ledger.Options, s settings) (*ledger.Ledger, error) {
	return ledger.OpenOnServer(opts, func(st serverstore.Settings) (serverstore.Store, error) {
		return connect(ctx, url, st, s)
	})
}

// store is one connection holding one ledger. The ledger calls it one
// operation at a time.
type store struct {
	conn      *pgx.Conn
	cfg       *pgx.ConnConfig // to connect again after the connection was lost
	schema    string
	testClock func() float64
	busyMS    int
	readOnly  bool
	mustExist bool
	closed    bool
}

func connect(ctx context.Context, url string, st serverstore.Settings, s settings) (*store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message quotes the URL: never pass it on.
		return nil, serverstore.ErrInvalidURL
	}
	if s.tracer != nil {
		cfg.Tracer = s.tracer
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectFault(ctx, err)
	}
	if s.schema == "" {
		if s.schema, err = sessionSchema(ctx, conn); err != nil {
			conn.Close(context.Background())
			return nil, err
		}
	}
	e := &store{conn: conn, cfg: cfg, schema: s.schema, testClock: s.testClock, busyMS: st.BusyTimeoutMS, readOnly: st.ReadOnly, mustExist: st.MustExist}
	if err := e.ensureSchema(ctx); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return e, nil
}

// SchemaSetting is the session setting that names the ledger's schema
// when Options.Schema is empty (the command line's case). The server
// holds it, however it was set: a URL parameter of that name (sent as a
// setting), libpq's options ("-c task_state_guard.schema=NAME", in the
// URL, PGOPTIONS or a service file), or the role's or database's own
// setting (ALTER ROLE ... SET). Unset or empty, the schema is
// DefaultSchema.
const SchemaSetting = "task_state_guard.schema"

// sessionSchema is the schema SchemaSetting names for the session, or
// DefaultSchema.
func sessionSchema(ctx context.Context, conn *pgx.Conn) (string, error) {
	var named *string
	if err := conn.QueryRow(ctx, `SELECT current_setting($1, true)`, SchemaSetting).Scan(&named); err != nil {
		return "", fault(ctx, "read settings", err)
	}
	if named == nil || *named == "" {
		return DefaultSchema, nil
	}
	if len(*named) > maxIdentifierBytes {
		return "", invalidInput("schema name must be 1 to 63 bytes without NUL")
	}
	return *named, nil
}

// Close ends the connection.
func (e *store) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if err := e.conn.Close(context.Background()); err != nil {
		return &serverstore.Fault{Op: "close"}
	}
	return nil
}

// fault maps a driver failure to the store's answers, keeping only the
// SQLSTATE of the server's errors.
func fault(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "55P03", "57014", "40P01": // lock_not_available, query_canceled (the timeouts), deadlock_detected
			return serverstore.ErrBusy
		}
		return &serverstore.Fault{Op: op, Code: pe.Code}
	}
	return &serverstore.Fault{Op: op}
}

// connectFault maps a failure to connect: the server's refusal of the
// login (SQLSTATE class 28, whichever host answered so), no server
// reached (every attempt failed in the network, a connect timeout
// included, which is no cancellation by the caller), or another fault
// keeping the server's SQLSTATE.
func connectFault(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if strings.HasPrefix(pe.Code, "28") { // invalid_authorization_specification, invalid_password
			return serverstore.ErrLoginRefused
		}
		return &serverstore.Fault{Op: "connect", Code: pe.Code}
	}
	// A dial's, a name lookup's and a timeout's errors all tell whether
	// they timed out (net.Error's method; the type is named structurally
	// to keep package net's dialers out of this package's imports).
	var netErr interface{ Timeout() bool }
	if pgconn.Timeout(err) || errors.As(err, &netErr) {
		return serverstore.ErrUnreachable
	}
	return &serverstore.Fault{Op: "connect"}
}

// begin starts a transaction, connecting again first when the connection
// was lost (the server restarted, the network was cut, the backend was
// terminated), so a long-lived ledger rides out a server restart. A lost
// connection found by BEGIN itself is connected again once: nothing of the
// operation had been sent. A connection lost later fails its operation,
// which then changed nothing; the next one connects again.
func (e *store) begin(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	for attempt := 0; ; attempt++ {
		if e.conn.IsClosed() {
			conn, err := pgx.ConnectConfig(ctx, e.cfg)
			if err != nil {
				return nil, connectFault(ctx, err)
			}
			e.conn = conn
		}
		tx, err := e.conn.BeginTx(ctx, opts)
		if err == nil {
			return tx, nil
		}
		if attempt > 0 || !e.conn.IsClosed() || ctx.Err() != nil {
			return nil, fault(ctx, "begin", err)
		}
	}
}

// inTx runs fn in one transaction with the ledger's schema alone on the
// search path and every wait bounded by the busy timeout: READ COMMITTED
// for writes (they lock what they decide on), one REPEATABLE READ READ
// ONLY snapshot for reads. fn's own errors pass unchanged.
func (e *store) inTx(ctx context.Context, readOnly bool, fn func(pgx.Tx) error) error {
	if e.closed {
		return ledger.ErrClosed
	}
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	if readOnly {
		opts = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	}
	tx, err := e.begin(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	timeout := strconv.Itoa(e.busyMS)
	if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true), set_config('lock_timeout', $2, true), set_config('statement_timeout', $2, true)`,
		pgx.Identifier{e.schema}.Sanitize(), timeout); err != nil {
		return fault(ctx, "begin", err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	return fault(ctx, "commit", tx.Commit(ctx))
}

// Write runs fn in one write transaction.
func (e *store) Write(ctx context.Context, fn func(serverstore.WriteTx) error) error {
	if e.readOnly {
		return &serverstore.Fault{Op: "write on a read-only store"}
	}
	return e.inTx(ctx, false, func(tx pgx.Tx) error { return fn(&writeTx{readTx{ctx, tx, e}}) })
}

// Read runs fn in one read-only snapshot.
func (e *store) Read(ctx context.Context, fn func(serverstore.ReadTx) error) error {
	return e.inTx(ctx, true, func(tx pgx.Tx) error { return fn(&readTx{ctx, tx, e}) })
}

// taskColumns selects a task's columns in serverstore.Row's order, the
// flag as the int64 the row checks expect.
const taskColumns = `id, parent_id, status, delivery_status, delivery_required::bigint, payload_hash,
	timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at,
	delivery_updated_at, terminal_code, delivery_code, version`

type readTx struct {
	ctx context.Context
	tx  pgx.Tx
	e   *store
}

func (r *readTx) task(id, lock string) (serverstore.Row, bool, error) {
	var row serverstore.Row
	err := r.each(`SELECT `+taskColumns+` FROM tasks WHERE id = $1 `+lock, []any{id}, func(found serverstore.Row) error {
		row = found
		return nil
	})
	return row, row != nil, err
}

// Task reads one task's row.
func (r *readTx) Task(id string) (serverstore.Row, bool, error) { return r.task(id, "") }

// Children reads a task's children, ordered as SQLite's BINARY collation
// orders ids.
func (r *readTx) Children(id string) ([]serverstore.Row, error) {
	var out []serverstore.Row
	err := r.each(`SELECT `+taskColumns+` FROM tasks WHERE parent_id = $1 ORDER BY created_at, id COLLATE "C"`, []any{id}, func(row serverstore.Row) error {
		out = append(out, row)
		return nil
	})
	return out, err
}

// ReconcileRows streams the active tasks and the terminal ones whose
// delivery is pending, each marked, through the state indexes, each
// query through a cursor a page at a time: no statement reads more than a
// page, however many rows reconcile examines.
//
// The rows pass to a reader that decides on each, which takes as long as
// the ledger is large and the machine busy; a snapshot's read waits for no
// writer (only a change of the schema could block it, and lock_timeout
// bounds that), so its statements have no statement timeout.
func (r *readTx) ReconcileRows(each func(active bool, row serverstore.Row) error) error {
	if err := r.unboundWork(); err != nil {
		return err
	}
	err := r.inPages(`SELECT `+taskColumns+` FROM tasks WHERE status IN ('queued','running')`, func(row serverstore.Row) error {
		return each(true, row)
	})
	if err != nil {
		return err
	}
	return r.inPages(`SELECT `+taskColumns+` FROM tasks WHERE delivery_status = 'pending' AND status IN ('succeeded','failed','timed_out','cancelled')`, func(row serverstore.Row) error {
		return each(false, row)
	})
}

// pageRows is how many rows one FETCH of inPages reads.
const pageRows = 4096

// inPages runs a query selecting taskColumns through a cursor and hands
// every row to fn, fetching pageRows at a time.
func (r *readTx) inPages(sqlText string, fn func(serverstore.Row) error) error {
	if _, err := r.tx.Exec(r.ctx, `DECLARE ledger_pages NO SCROLL CURSOR FOR `+sqlText); err != nil {
		return fault(r.ctx, "read", err)
	}
	for {
		n := 0
		err := r.each(`FETCH `+strconv.Itoa(pageRows)+` FROM ledger_pages`, nil, func(row serverstore.Row) error {
			n++
			return fn(row)
		})
		if err != nil {
			return err
		}
		if n < pageRows {
			break
		}
	}
	_, err := r.tx.Exec(r.ctx, `CLOSE ledger_pages`)
	return fault(r.ctx, "read", err)
}

// List reads a page of the filter's rows by id in byte order.
func (r *readTx) List(q serverstore.ListQuery) ([]serverstore.Row, error) {
	var where []string
	var params []any
	add := func(term string, v any) {
		params = append(params, v)
		where = append(where, strings.ReplaceAll(term, "$?", "$"+strconv.Itoa(len(params))))
	}
	if len(q.Statuses) > 0 {
		add(`status = ANY($?)`, q.Statuses)
	}
	if len(q.Deliveries) > 0 {
		add(`delivery_status = ANY($?)`, q.Deliveries)
	}
	if q.UpdatedBefore != nil {
		add(`updated_at < $?`, *q.UpdatedBefore)
	}
	if q.EndedBefore != nil {
		add(`ended_at < $?`, *q.EndedBefore)
	}
	if q.ParentID != "" {
		add(`parent_id = $?`, q.ParentID)
	}
	if q.After != "" {
		add(`id COLLATE "C" > $?`, q.After)
	}
	sqlText := `SELECT ` + taskColumns + ` FROM tasks`
	if len(where) > 0 {
		sqlText += ` WHERE ` + strings.Join(where, ` AND `)
	}
	params = append(params, q.Rows)
	sqlText += ` ORDER BY id COLLATE "C" LIMIT $` + strconv.Itoa(len(params))
	var out []serverstore.Row
	err := r.each(sqlText, params, func(row serverstore.Row) error {
		out = append(out, row)
		return nil
	})
	return out, err
}

// Events reads a task's events by sequence.
func (r *readTx) Events(taskID string) ([]serverstore.Event, error) {
	var out []serverstore.Event
	err := r.eachEvent(`SELECT `+eventColumns+` FROM task_events WHERE task_id = $1 ORDER BY sequence`, []any{taskID}, func(ev serverstore.Event) error {
		out = append(out, ev)
		return nil
	})
	return out, err
}

// query runs a query and hands every row's values to fn: the one loop
// every read goes through, so every driver failure is reduced by fault
// alike. An error of fn passes unchanged.
func (r *readTx) query(sqlText string, params []any, fn func(vals []any) error) error {
	rows, err := r.tx.Query(r.ctx, sqlText, params...)
	if err != nil {
		return fault(r.ctx, "read", err)
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return fault(r.ctx, "read", err)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return fault(r.ctx, "read", rows.Err())
}

// each runs a query selecting taskColumns and hands every row to fn.
func (r *readTx) each(sqlText string, params []any, fn func(serverstore.Row) error) error {
	return r.query(sqlText, params, func(vals []any) error { return fn(taskRow(vals)) })
}

// taskRow is a row of taskColumns' values.
func taskRow(vals []any) serverstore.Row {
	row := make(serverstore.Row, len(vals))
	for i, v := range vals {
		row[i] = v
	}
	return row
}

// eventColumns selects an event's columns in eventOf's order.
const eventColumns = `sequence, task_id, event_kind, from_value, to_value, occurred_at, code`

// eachEvent runs a query selecting eventColumns and hands every event to
// fn.
func (r *readTx) eachEvent(sqlText string, params []any, fn func(serverstore.Event) error) error {
	return r.query(sqlText, params, func(vals []any) error {
		ev, ok := eventOf(vals)
		if !ok {
			return &serverstore.Fault{Op: "read events"}
		}
		return fn(ev)
	})
}

// eventOf reads eventColumns' values; ok is false for a value of another
// type than its column's (the schema's types make that impossible).
func eventOf(vals []any) (ev serverstore.Event, ok bool) {
	if len(vals) != 7 {
		return ev, false
	}
	text := func(v any) (*string, bool) {
		if v == nil {
			return nil, true
		}
		s, ok := v.(string)
		return &s, ok
	}
	var ok1, ok2, ok3, ok4, ok5, ok6, ok7 bool
	ev.Sequence, ok1 = vals[0].(int64)
	ev.TaskID, ok2 = vals[1].(string)
	ev.Kind, ok3 = vals[2].(string)
	ev.From, ok4 = text(vals[3])
	ev.To, ok5 = vals[4].(string)
	ev.OccurredAt, ok6 = vals[5].(float64)
	ev.Code, ok7 = text(vals[6])
	return ev, ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7
}

type writeTx struct {
	readTx
}

// LockTask reads a row FOR UPDATE.
func (w *writeTx) LockTask(id string) (serverstore.Row, bool, error) {
	return w.task(id, "FOR UPDATE")
}

// ShareTask reads a row FOR SHARE.
func (w *writeTx) ShareTask(id string) (serverstore.Row, bool, error) {
	return w.task(id, "FOR SHARE")
}

// ReserveID takes a transaction-level advisory lock on the id: a second
// create of the id waits here, then finds the first one's row.
func (w *writeTx) ReserveID(id string) error {
	_, err := w.tx.Exec(w.ctx, `SELECT pg_advisory_xact_lock(hashtext('task_state_guard create ' || $1::text))`, id)
	return fault(w.ctx, "write", err)
}

// Now is the server's clock_timestamp() (not now(), the transaction's
// start, which a transaction that waited for a lock would find earlier
// than the time its predecessor wrote), unless a test clock is set.
func (r *readTx) Now() (float64, error) {
	if r.e.testClock != nil {
		return r.e.testClock(), nil
	}
	var now float64
	err := r.tx.QueryRow(r.ctx, `SELECT extract(epoch FROM clock_timestamp())::double precision`).Scan(&now)
	if err != nil {
		return 0, fault(r.ctx, "read clock", err)
	}
	return now, nil
}

// LockTasks locks the table in EXCLUSIVE mode, which conflicts with the
// row locks of the per-task writes (they wait at their first statement,
// before their clock is read) and not with readers. Taken first, in a
// transaction that takes no row lock before it: no deadlock with them.
//
// Once it holds the lock no other writer can make the transaction wait,
// so what follows is work, however long: the busy timeout bounded the
// wait for the lock, and the statement timeout is lifted for the rest of
// the transaction (lock_timeout stays).
func (w *writeTx) LockTasks() error {
	if _, err := w.tx.Exec(w.ctx, `LOCK TABLE tasks IN EXCLUSIVE MODE`); err != nil {
		return fault(w.ctx, "write", err)
	}
	return w.unboundWork()
}

// unboundWork lifts the statement timeout for the rest of the
// transaction, for work that waits for nothing.
func (r *readTx) unboundWork() error {
	_, err := r.tx.Exec(r.ctx, `SELECT set_config('statement_timeout', '0', true)`)
	return fault(r.ctx, "read", err)
}

// InsertTask adds a row.
func (w *writeTx) InsertTask(row serverstore.Row) error {
	_, err := w.tx.Exec(w.ctx, `INSERT INTO tasks (id, parent_id, status, delivery_status, delivery_required, payload_hash,
		timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`, args(row)...)
	return fault(w.ctx, "write", err)
}

// UpdateTask writes every column but the id of an existing row.
func (w *writeTx) UpdateTask(row serverstore.Row) error {
	_, err := w.tx.Exec(w.ctx, `UPDATE tasks SET parent_id = $2, status = $3, delivery_status = $4, delivery_required = $5,
		payload_hash = $6, timeout_seconds = $7, created_at = $8, started_at = $9, updated_at = $10, ended_at = $11,
		deadline_at = $12, delivery_updated_at = $13, terminal_code = $14, delivery_code = $15, version = $16 WHERE id = $1`, args(row)...)
	return fault(w.ctx, "write", err)
}

// AddEvent appends an event; the identity column numbers it.
func (w *writeTx) AddEvent(ev serverstore.Event) error {
	_, err := w.tx.Exec(w.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES ($1, $2, $3, $4, $5, $6)`,
		ev.TaskID, ev.Kind, ev.From, ev.To, ev.OccurredAt, ev.Code)
	return fault(w.ctx, "write", err)
}

// batchRows is how many rows one statement of UpdateTasks or AddEvents
// carries.
const batchRows = 4096

// UpdateTasks writes rows in statements of batchRows, each joining the
// tasks with the rows' columns passed as arrays (one per column, so
// every value keeps its type and every double its bits).
func (w *writeTx) UpdateTasks(rows []serverstore.Row) error {
	for start := 0; start < len(rows); start += batchRows {
		chunk := rows[start:min(start+batchRows, len(rows))]
		params, ok := columnArrays(chunk)
		if !ok {
			return &serverstore.Fault{Op: "update tasks"}
		}
		tag, err := w.tx.Exec(w.ctx, `UPDATE tasks SET parent_id = v.parent_id, status = v.status, delivery_status = v.delivery_status,
			delivery_required = v.delivery_required, payload_hash = v.payload_hash, timeout_seconds = v.timeout_seconds,
			created_at = v.created_at, started_at = v.started_at, updated_at = v.updated_at, ended_at = v.ended_at,
			deadline_at = v.deadline_at, delivery_updated_at = v.delivery_updated_at, terminal_code = v.terminal_code,
			delivery_code = v.delivery_code, version = v.version
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::float8[], $8::float8[],
				$9::float8[], $10::float8[], $11::float8[], $12::float8[], $13::float8[], $14::text[], $15::text[], $16::bigint[])
				AS v(id, parent_id, status, delivery_status, delivery_required, payload_hash, timeout_seconds, created_at,
				started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version)
			WHERE tasks.id = v.id`, params...)
		if err != nil {
			return fault(w.ctx, "write", err)
		}
		if tag.RowsAffected() != int64(len(chunk)) {
			return &serverstore.Fault{Op: "update tasks"}
		}
	}
	return nil
}

// columnArrays turns task rows into one typed array per column, in
// serverstore.Row's order, NULL as nil; ok is false for a value of
// another type than its column's.
func columnArrays(rows []serverstore.Row) ([]any, bool) {
	texts := map[int][]*string{}
	floats := map[int][]*float64{}
	var required []int32
	var versions []int64
	for _, row := range rows {
		if len(row) != 16 {
			return nil, false
		}
		for i, v := range row {
			switch i {
			case 4, 15:
				n, ok := v.(int64)
				if !ok {
					return nil, false
				}
				if i == 4 {
					required = append(required, int32(n))
				} else {
					versions = append(versions, n)
				}
			case 0, 1, 2, 3, 5, 13, 14:
				switch x := v.(type) {
				case nil:
					texts[i] = append(texts[i], nil)
				case string:
					texts[i] = append(texts[i], &x)
				default:
					return nil, false
				}
			default:
				switch x := v.(type) {
				case nil:
					floats[i] = append(floats[i], nil)
				case float64:
					floats[i] = append(floats[i], &x)
				default:
					return nil, false
				}
			}
		}
	}
	params := make([]any, 16)
	for i := range params {
		switch i {
		case 4:
			params[i] = required
		case 15:
			params[i] = versions
		case 0, 1, 2, 3, 5, 13, 14:
			params[i] = texts[i]
		default:
			params[i] = floats[i]
		}
	}
	return params, true
}

// AddEvents appends events in statements of batchRows; the identity
// numbers them in the order the sorted rows are inserted.
func (w *writeTx) AddEvents(evs []serverstore.Event) error {
	for start := 0; start < len(evs); start += batchRows {
		chunk := evs[start:min(start+batchRows, len(evs))]
		var tasks, kinds, tos []string
		var froms, codes []*string
		var ats []float64
		for _, ev := range chunk {
			tasks, kinds, froms, tos, ats, codes = append(tasks, ev.TaskID), append(kinds, ev.Kind), append(froms, ev.From),
				append(tos, ev.To), append(ats, ev.OccurredAt), append(codes, ev.Code)
		}
		_, err := w.tx.Exec(w.ctx, `INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT task_id, event_kind, from_value, to_value, occurred_at, code
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::text[]) WITH ORDINALITY
				AS e(task_id, event_kind, from_value, to_value, occurred_at, code, ord)
			ORDER BY ord`, tasks, kinds, froms, tos, ats, codes)
		if err != nil {
			return fault(w.ctx, "write", err)
		}
	}
	return nil
}

func args(row serverstore.Row) []any {
	out := make([]any, len(row))
	for i, v := range row {
		out[i] = v
	}
	return out
}

// PruneRoots reads the next candidate roots in one delivery state
// through tasks_delivery_idx.
func (r *readTx) PruneRoots(q serverstore.PruneQuery) ([]serverstore.Row, error) {
	sqlText := `SELECT ` + taskColumns + ` FROM tasks WHERE parent_id IS NULL AND delivery_status = $1 AND ended_at < $2`
	params := []any{q.Delivery, q.Before}
	if q.AfterEnded != nil {
		sqlText += ` AND (ended_at > $3 OR (ended_at = $3 AND id COLLATE "C" > $4))`
		params = append(params, *q.AfterEnded, q.AfterID)
	}
	params = append(params, q.Rows)
	sqlText += ` ORDER BY ended_at, id COLLATE "C" LIMIT $` + strconv.Itoa(len(params))
	var out []serverstore.Row
	err := r.each(sqlText, params, func(row serverstore.Row) error {
		out = append(out, row)
		return nil
	})
	return out, err
}

// pruneTreesSQL reads the trees under the roots given as an array, each
// row led by its root's place in the array (from 1), ordered by it and
// then by depth. The recursion starts only at tasks without a parent, so
// no parent cycle (only in a damaged ledger) is reachable from it.
const pruneTreesSQL = `WITH RECURSIVE tree(root, id, depth) AS (
		SELECT r.ord, r.id, 0 FROM unnest($1::text[]) WITH ORDINALITY AS r(id, ord) JOIN tasks t ON t.id = r.id AND t.parent_id IS NULL
		UNION ALL
		SELECT tree.root, c.id, tree.depth + 1 FROM tree JOIN tasks c ON c.parent_id = tree.id)
	SELECT tree.root, ` + taskColumns + ` FROM tree JOIN tasks USING (id) ORDER BY tree.root, tree.depth`

// Trees reads whole trees in one recursive query through
// tasks_parent_idx.
func (r *readTx) Trees(roots []string, each func(root int, row serverstore.Row) error) error {
	return r.query(pruneTreesSQL, []any{roots}, func(vals []any) error {
		ord, ok := vals[0].(int64)
		if !ok || ord < 1 || ord > int64(len(roots)) {
			return &serverstore.Fault{Op: "read trees"}
		}
		return each(int(ord-1), taskRow(vals[1:]))
	})
}

// CountEvents counts events through task_events_task_idx.
func (r *readTx) CountEvents(taskIDs []string) (int, error) {
	var n int
	if err := r.tx.QueryRow(r.ctx, `SELECT count(*) FROM task_events WHERE task_id = ANY($1)`, taskIDs).Scan(&n); err != nil {
		return 0, fault(r.ctx, "read", err)
	}
	return n, nil
}

// DeleteTasks removes the events, then the tasks, each in one statement;
// the server's foreign keys refuse a removal that would leave a task
// naming a removed parent.
func (w *writeTx) DeleteTasks(taskIDs []string) (int, int, error) {
	events, err := w.tx.Exec(w.ctx, `DELETE FROM task_events WHERE task_id = ANY($1)`, taskIDs)
	if err != nil {
		return 0, 0, fault(w.ctx, "write", err)
	}
	tasks, err := w.tx.Exec(w.ctx, `DELETE FROM tasks WHERE id = ANY($1)`, taskIDs)
	if err != nil {
		return 0, 0, fault(w.ctx, "write", err)
	}
	return int(tasks.RowsAffected()), int(events.RowsAffected()), nil
}

// TasksAfter reads a page of tasks by id through the primary key.
func (r *readTx) TasksAfter(after string, n int) ([]serverstore.Row, error) {
	var out []serverstore.Row
	err := r.each(`SELECT `+taskColumns+` FROM tasks WHERE id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2`, []any{after, n}, func(row serverstore.Row) error {
		out = append(out, row)
		return nil
	})
	return out, err
}

// EventsAfter reads a page of events by sequence.
func (r *readTx) EventsAfter(after int64, n int) ([]serverstore.Event, error) {
	var out []serverstore.Event
	err := r.eachEvent(`SELECT `+eventColumns+` FROM task_events WHERE sequence > $1 ORDER BY sequence LIMIT $2`, []any{after, n}, func(ev serverstore.Event) error {
		out = append(out, ev)
		return nil
	})
	return out, err
}

// Counts counts both tables.
func (r *readTx) Counts() (int, int, error) {
	var tasks, events int
	if err := r.tx.QueryRow(r.ctx, `SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM task_events)`).Scan(&tasks, &events); err != nil {
		return 0, 0, fault(r.ctx, "read", err)
	}
	return tasks, events, nil
}

// copySource hands a load's rows to COPY one by one; an error of the
// ledger's reader ends the copy and is kept to be returned as it is.
type copySource struct {
	next func() ([]any, bool, error)
	vals []any
	err  error
}

func (c *copySource) Next() bool {
	if c.err != nil {
		return false
	}
	vals, ok, err := c.next()
	if err != nil {
		c.err = err
		return false
	}
	c.vals = vals
	return ok
}

func (c *copySource) Values() ([]any, error) { return c.vals, nil }

func (c *copySource) Err() error { return c.err }

// copyIn runs one COPY of src into table; the reader's own error passes
// unchanged. The restore holds the table lock (LockTasks) first, so the
// load, however long, has no statement timeout.
func (w *writeTx) copyIn(table string, columns []string, src *copySource) (int, error) {
	n, err := w.tx.CopyFrom(w.ctx, pgx.Identifier{table}, columns, src)
	if src.err != nil {
		return 0, src.err
	}
	if err != nil {
		return 0, fault(w.ctx, "write", err)
	}
	return int(n), nil
}

// LoadTasks adds rows with one COPY: the foreign keys are checked at its
// end, so a child may come before its parent.
func (w *writeTx) LoadTasks(next func() (serverstore.Row, bool, error)) (int, error) {
	columns := []string{"id", "parent_id", "status", "delivery_status", "delivery_required", "payload_hash",
		"timeout_seconds", "created_at", "started_at", "updated_at", "ended_at", "deadline_at",
		"delivery_updated_at", "terminal_code", "delivery_code", "version"}
	return w.copyIn("tasks", columns, &copySource{next: func() ([]any, bool, error) {
		row, ok, err := next()
		if !ok || err != nil {
			return nil, ok, err
		}
		vals := args(row)
		if v, isInt := vals[4].(int64); isInt {
			vals[4] = int32(v) // delivery_required is an integer column
		}
		return vals, true, nil
	}})
}

// LoadEvents adds events with one COPY, which writes the identity column
// as given, then moves the column's numbering past the largest.
func (w *writeTx) LoadEvents(next func() (serverstore.Event, bool, error)) (int, error) {
	largest := int64(0)
	columns := []string{"sequence", "task_id", "event_kind", "from_value", "to_value", "occurred_at", "code"}
	n, err := w.copyIn("task_events", columns, &copySource{next: func() ([]any, bool, error) {
		ev, ok, err := next()
		if !ok || err != nil {
			return nil, ok, err
		}
		largest = max(largest, ev.Sequence)
		return []any{ev.Sequence, ev.TaskID, ev.Kind, ev.From, ev.To, ev.OccurredAt, ev.Code}, true, nil
	}})
	if err != nil || largest == 0 {
		return n, err
	}
	_, err = w.tx.Exec(w.ctx, `SELECT setval(s, greatest(coalesce(pg_sequence_last_value(s), 0), $1))
		FROM (SELECT pg_get_serial_sequence('task_events', 'sequence')::regclass AS s) AS q`, largest)
	return n, fault(w.ctx, "write", err)
}

// DoctorTasks reads a page of tasks through the primary key, each joined
// to its parent's row. Ids are compared in the column's own collation
// (the database's), whose order the key's index holds; EventsByTask and
// ParentCycles order ids alike.
func (r *readTx) DoctorTasks(after *string, n int) ([]serverstore.DoctorTask, error) {
	where, params := ``, []any{n}
	if after != nil {
		where, params = `WHERE id > $2`, append(params, *after)
	}
	var out []serverstore.DoctorTask
	err := r.query(`SELECT t.*, p.created_at, p.id IS NOT NULL
		FROM (SELECT `+taskColumns+` FROM tasks `+where+` ORDER BY id LIMIT $1) AS t
		LEFT JOIN tasks p ON p.id = t.parent_id ORDER BY t.id`, params, func(vals []any) error {
		if len(vals) != 18 {
			return &serverstore.Fault{Op: "read tasks"}
		}
		found, ok := vals[17].(bool)
		if !ok {
			return &serverstore.Fault{Op: "read tasks"}
		}
		out = append(out, serverstore.DoctorTask{Row: taskRow(vals[:16]), ParentCreated: vals[16], ParentFound: found})
		return nil
	})
	return out, err
}

// EventsByTask reads a page of events through task_events_task_idx.
func (r *readTx) EventsByTask(q serverstore.EventRange) ([]serverstore.Event, error) {
	var where []string
	params := []any{q.Rows}
	add := func(term string, vals ...any) {
		for _, v := range vals {
			params = append(params, v)
			term = strings.Replace(term, "$?", "$"+strconv.Itoa(len(params)), 1)
		}
		where = append(where, term)
	}
	if q.Above != nil {
		add(`task_id > $?`, *q.Above)
	}
	if q.Through != nil {
		add(`task_id <= $?`, *q.Through)
	}
	if q.AfterSequence > 0 {
		add(`(task_id, sequence) > ($?, $?)`, q.AfterTask, q.AfterSequence)
	}
	sqlText := `SELECT ` + eventColumns + ` FROM task_events`
	if len(where) > 0 {
		sqlText += ` WHERE ` + strings.Join(where, ` AND `)
	}
	var out []serverstore.Event
	err := r.eachEvent(sqlText+` ORDER BY task_id, sequence LIMIT $1`, params, func(ev serverstore.Event) error {
		out = append(out, ev)
		return nil
	})
	return out, err
}

// parentCyclesSQL walks up from each task named in $1 through the
// tasks whose ids sort above it, until it meets a task that sorts below
// it, a task without a parent or a missing one, or itself: it meets
// itself exactly when it is the least task of a cycle, so each cycle is
// counted at one task. A walk is as long as the run of larger ids above
// its task; UNION ends the walk from a task below a cycle of larger ids.
const parentCyclesSQL = `WITH RECURSIVE up(start, id) AS (
		SELECT id, parent_id FROM tasks WHERE id = ANY($1) AND parent_id IS NOT NULL
		UNION
		SELECT up.start, t.parent_id FROM up JOIN tasks t ON t.id = up.id WHERE up.id > up.start AND t.parent_id IS NOT NULL)
	SELECT count(*) FROM up WHERE id = start`

// ParentCycles counts the cycles whose least task is one of ids.
func (r *readTx) ParentCycles(ids []string) (int, error) {
	var n int
	if err := r.tx.QueryRow(r.ctx, parentCyclesSQL, ids).Scan(&n); err != nil {
		return 0, fault(r.ctx, "read", err)
	}
	return n, nil
}

// StorageCheck is the doctor's quick_check on PostgreSQL, which has no
// such check of its pages without an extension. It checks what can make
// the stored rows escape the schema's rules or other roles' reach: the
// schema is exactly the ledger's (catalog fingerprint and metadata, as at
// open), no other role owns or is granted anything of it (checkAccess, as
// at open: a long-lived ledger sees a grant made since it opened here),
// every trigger is the server's own and enabled (a disabled one turns a
// foreign key off), and every index is valid, ready and live (a failed
// CREATE INDEX CONCURRENTLY leaves an invalid one behind).
func (r *readTx) StorageCheck() (bool, error) {
	for _, check := range []func(context.Context, pgx.Tx, string) error{checkSchema, checkAccess} {
		if err := check(r.ctx, r.tx, r.e.schema); err != nil {
			if errors.Is(err, serverstore.ErrSchemaMismatch) || errors.Is(err, serverstore.ErrForeignOwner) || errors.Is(err, serverstore.ErrGranted) {
				return false, nil
			}
			return false, err
		}
	}
	var problems int
	err := r.tx.QueryRow(r.ctx, `SELECT
		(SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND (NOT g.tgisinternal OR g.tgenabled <> 'O'))
		+ (SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND NOT (i.indisvalid AND i.indisready AND i.indislive))`, r.e.schema).Scan(&problems)
	if err != nil {
		return false, fault(r.ctx, "read", err)
	}
	return problems == 0, nil
}
