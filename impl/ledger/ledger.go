package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
	"modernc.org/sqlite/vfs"

	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// defaultBusyTimeoutMS is the busy_timeout when Options leaves it zero.
const defaultBusyTimeoutMS = 5000

// busyTimeoutMS is Options.BusyTimeout as SQLite's busy_timeout takes it:
// whole milliseconds, rounded up so that no wait is shorter than asked,
// at most a C int's, and defaultBusyTimeoutMS for zero.
func (o Options) busyTimeoutMS() (int, error) {
	switch {
	case o.BusyTimeout < 0:
		return 0, invalidInput("busy timeout must not be negative")
	case o.BusyTimeout == 0:
		return defaultBusyTimeoutMS, nil
	}
	ms := o.BusyTimeout / time.Millisecond
	if o.BusyTimeout%time.Millisecond != 0 {
		ms++
	}
	return int(min(ms, math.MaxInt32)), nil
}

// Ledger is one open task ledger. Its methods are safe for concurrent use
// by goroutines; they run one at a time on a single SQLite connection,
// because SQLite has one writer anyway.
type Ledger struct {
	// turn holds a token while an operation runs: one at a time, as with
	// a mutex, but a waiting operation can give up when its context ends.
	turn     chan struct{}
	db       *sql.DB
	conn     *sql.Conn
	guard    *storageguard.Guard
	clock    func() float64 // in Unix seconds, as stored
	newID    func() (string, error)
	readOnly bool
	view     *storageguard.View // what a read-only ledger reads (spec 12.3)
	viewFS   *vfs.FS            // the VFS that serves view to SQLite
	schemaOf *storageguard.View // the view schema was read from
	schema   schemaStatus
	info     StorageInfo
	stmts    map[string]*sql.Stmt
	closed   bool
	// allowExternalACL is Options.AllowExternalACL, for Backup's target.
	allowExternalACL bool
	// plans is zero outside tests (see planOverrides).
	plans planOverrides
	// server, when set, holds the rows instead of a SQLite file
	// (server.go); the SQLite fields above are then unused.
	server serverstore.Store
}

// planOverrides force the plans an operation would otherwise choose by
// its estimates, so that tests can hold every plan to the same answers.
// Only tests set them; the zero value chooses as the product does.
type planOverrides struct {
	// examine forces reconcile's plan: "index" or "scan"; "" chooses by
	// the estimate (reconcile.go).
	examine string
	// list forces List's plan: "index" (the first index that serves the
	// filter, if any) or "scan" (the walk, with a window of two ids); ""
	// chooses by the count (list.go).
	list string
	// pruneBatch overrides Prune's batch bounds: candidate roots and
	// tasks per batch; zero keeps pruneBatchRoots and pruneBatchTasks.
	pruneBatch [2]int
	// doctorPage overrides the server doctor's page of tasks
	// (doctorPageRows); zero keeps it.
	doctorPage int
	// pruneWindow overrides a prune plan's bounds: tasks, batches and
	// bytes of sequences; zero keeps the pruneWindow constants.
	pruneWindow [3]int
}

// Open opens (or, unless read-only, creates) the ledger at path after the
// storage checks of spec/task-state-guard.md §11, and validates, creates or
// migrates the schema (§9).
func Open(path string, opts Options) (*Ledger, error) {
	busyMS, err := opts.busyTimeoutMS()
	if err != nil {
		return nil, err
	}
	g, err := storageguard.Open(path, opts.storage())
	if err != nil {
		return nil, err
	}
	l := &Ledger{
		turn:     make(chan struct{}, 1),
		guard:    g,
		clock:    opts.secondsClock(),
		newID:    opts.NewID,
		readOnly: opts.ReadOnly,
		stmts:    map[string]*sql.Stmt{},

		allowExternalACL: opts.AllowExternalACL,
		info: StorageInfo{
			BusyTimeoutMS:   busyMS,
			ForeignKeys:     true,
			JournalMode:     "wal",
			PermissionModel: g.PermissionModel(),
		},
	}
	if l.newID == nil {
		l.newID = randomTaskID
	}
	if opts.ReadOnly {
		err = l.openReadOnly()
	} else {
		err = fileFault(l.openWritable(opts))
	}
	if err != nil {
		l.shutdown()
		return nil, err
	}
	return l, nil
}

// acquire waits for the ledger's turn (the operation before it on this
// *Ledger to end), or until ctx ends, which is then the answer.
func (l *Ledger) acquire(ctx context.Context) error {
	select {
	case l.turn <- struct{}{}:
		return nil
	default:
	}
	if hooks.waitingForTurn != nil {
		hooks.waitingForTurn()
	}
	select {
	case l.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return cancelled(ctx.Err())
	}
}

// acquireOpen is how an operation starts: acquire, then ErrClosed (the
// turn given back) when the ledger is closed. The caller releases.
func (l *Ledger) acquireOpen(ctx context.Context) error {
	if err := l.acquire(ctx); err != nil {
		return err
	}
	if l.closed {
		l.release()
		return ErrClosed
	}
	return nil
}

// release ends the turn acquire took.
func (l *Ledger) release() { <-l.turn }

// secondsClock is the clock the options give, in the stored form: the
// float nearest to each reading of Clock (the wall clock when nil), or
// the float seconds SetClockSeconds handed over.
func (o Options) secondsClock() func() float64 {
	if o.clockSeconds != nil {
		return o.clockSeconds
	}
	clock := o.Clock
	if clock == nil {
		clock = time.Now
	}
	return func() float64 { return floatseconds.UnixSeconds(clock()) }
}

// fileURI renders path as a SQLite URI with the given query.
func fileURI(path, query string) string {
	p := filepath.ToSlash(path)
	if runtime.GOOS == "windows" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	var b strings.Builder
	b.WriteString("file:")
	if strings.HasPrefix(p, "//") {
		b.WriteString("//")
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '?', '#', '%':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("?")
	b.WriteString(query)
	return b.String()
}

// connect opens a one-connection pool and pins its connection.
func (l *Ledger) connect(dsn string) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return internal("open database", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		return classifySQLite("open database", err)
	}
	l.db, l.conn = db, conn
	return nil
}

// pragmaInt runs a PRAGMA and returns its integer answer.
func (l *Ledger) pragmaInt(q string) (int, error) {
	var v int
	err := l.conn.QueryRowContext(context.Background(), q).Scan(&v)
	return v, err
}

// pragmaText runs a PRAGMA and returns its text answer.
func (l *Ledger) pragmaText(q string) (string, error) {
	var v string
	err := l.conn.QueryRowContext(context.Background(), q).Scan(&v)
	return v, err
}

// setBusyAndKeys sets and verifies busy_timeout, foreign_keys and
// cache_size; every connection runs it.
func (l *Ledger) setBusyAndKeys() error {
	ms := l.info.BusyTimeoutMS
	if _, err := l.pragmaInt(fmt.Sprintf("PRAGMA busy_timeout = %d", ms)); err != nil {
		return classifySQLite("set busy_timeout", err)
	}
	if got, err := l.pragmaInt("PRAGMA busy_timeout"); err != nil || got != ms {
		return internal("verify busy_timeout", errOrMismatch(err))
	}
	if _, err := l.conn.ExecContext(context.Background(), "PRAGMA foreign_keys = ON"); err != nil {
		return classifySQLite("set foreign_keys", err)
	}
	if got, err := l.pragmaInt("PRAGMA foreign_keys"); err != nil || got != 1 {
		return internal("verify foreign_keys", errOrMismatch(err))
	}
	// A bounded page cache, so a pass over a large ledger reuses a few
	// MiB of pages instead of growing with the file (spec/task-state-guard.md §10). Set
	// after busy_timeout: the pragma loads the schema, which takes a lock.
	if _, err := l.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA cache_size = %d", cacheSizeKiB)); err != nil {
		return classifySQLite("set cache_size", err)
	}
	if got, err := l.pragmaInt("PRAGMA cache_size"); err != nil || got != cacheSizeKiB {
		return internal("verify cache_size", errOrMismatch(err))
	}
	return nil
}

// cacheSizeKiB is SQLite's page cache bound per connection, as PRAGMA
// cache_size spells it: negative means KiB rather than pages.
const cacheSizeKiB = -2048

func errOrMismatch(err error) error {
	if err != nil {
		return err
	}
	return errors.New("setting did not take effect")
}

// openWritable connects read-write, validates the schema before anything
// is written, then switches to WAL and creates or migrates the schema.
func (l *Ledger) openWritable(opts Options) error {
	if err := l.refusalThroughView(); err != nil {
		return err
	}
	if err := l.connect(fileURI(l.guard.Path(), "mode=rw")); err != nil {
		return err
	}
	if err := l.guard.Check(); err != nil {
		return err
	}
	if err := l.setBusyAndKeys(); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := readSchema(ctx, l.conn)
	if err != nil {
		return classifySQLite("read schema", err)
	}
	if !st.empty && !st.okV1() && !st.okV2() {
		return stateConflict("schema does not match")
	}
	if st.okV1() {
		// Refuse an unsafe v1 file before WAL is switched on, so that a
		// refused file is left byte for byte as it was.
		safe, err := v1MigrationSafe(ctx, l.conn)
		if err != nil {
			return classifySQLite("inspect v1 schema", err)
		}
		if !safe {
			return stateConflict("schema v1 holds codes outside the registry")
		}
	}
	var mode string
	err = l.retryBusy(func() (err error) {
		mode, err = l.pragmaText("PRAGMA journal_mode = WAL")
		return err
	})
	if err != nil {
		return classifySQLite("set journal_mode", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return internal("verify journal_mode", errOrMismatch(nil))
	}
	// FULL, not NORMAL (divergence L6): in WAL mode NORMAL does not sync
	// the -wal at each commit, so a transaction that answered ok could
	// roll back after a power loss.
	if _, err := l.conn.ExecContext(ctx, "PRAGMA synchronous = FULL"); err != nil {
		return classifySQLite("set synchronous", err)
	}
	if got, err := l.pragmaInt("PRAGMA synchronous"); err != nil || got != 2 {
		return internal("verify synchronous", errOrMismatch(err))
	}
	if err := l.guard.CheckSidecars(); err != nil {
		return err
	}
	if st.empty || st.okV1() {
		err := l.write(context.Background(), func(tx *txn) error {
			again, err := readSchema(ctx, tx)
			if err != nil {
				return err
			}
			switch {
			case again.empty:
				return createSchema(ctx, tx)
			case again.okV1():
				safe, err := v1MigrationSafe(ctx, tx)
				if err != nil {
					return err
				}
				if !safe {
					return stateConflict("schema v1 holds codes outside the registry")
				}
				return migrateV1(ctx, tx)
			case again.okV2():
				return nil
			}
			return stateConflict("schema does not match")
		})
		if err != nil {
			return err
		}
		st = schemaStatus{exact: true, version: 2, fingerprint: schemaFingerprint}
	}
	l.schema = st
	return nil
}

// busyDelaysMS space the attempts of a step SQLite answers busy without
// waiting itself, as SQLite's own busy handler spaces its attempts.
var busyDelaysMS = [...]int{1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100}

// retryBusy runs step again while SQLite answers it busy, waiting between
// attempts until the waits add up to the busy timeout, and then returns
// the last answer. It is for the switch to WAL: SQLite answers that busy
// at once, without its busy handler, when another connection holds the
// write lock (as one does while it sets up the same fresh ledger), because
// the switch upgrades a read lock it already holds. Like SQLite's handler,
// it counts the time it slept, reading no clock.
func (l *Ledger) retryBusy(step func() error) error {
	waited := 0
	for i := 0; ; i++ {
		err := step()
		if !sqliteBusy(err) || waited >= l.info.BusyTimeoutMS {
			return err
		}
		d := min(busyDelaysMS[min(i, len(busyDelaysMS)-1)], l.info.BusyTimeoutMS-waited)
		if hooks.onSetupBusy != nil {
			hooks.onSetupBusy()
		}
		time.Sleep(time.Duration(d) * time.Millisecond)
		waited += d
	}
}

// sqliteBusy reports SQLite's busy answer.
func sqliteBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// refusalThroughView decides, when a -wal lies beside the file, whether the
// writable open must refuse it (a schema neither v1 nor v2, an unsafe v1, a
// file SQLite cannot read as a ledger, a -wal no writer of this file
// wrote), reading through a read-only view (12.3) before any writable
// connection exists: a writable connection would recover the -wal, and its
// close would checkpoint the log into the refused file and delete the -wal.
// A refusal read through the view counts only if the files did not change
// under it (the -wal's own header needs no such check: it is checksummed);
// anything else (no -wal, a view that cannot be made, a failed read) leaves
// the decision to the writable path, with its classes, as before.
func (l *Ledger) refusalThroughView() error {
	if present, _, err := storageguard.SidecarState(l.guard.Path() + "-wal"); err != nil || !present {
		return nil
	}
	v, err := storageguard.NewView(l.guard, l.info.BusyTimeoutMS)
	if errors.Is(err, storageguard.ErrLogNotLedger) {
		return storageguard.ErrNotLedgerFile
	}
	if err != nil {
		return nil
	}
	defer l.dropView()
	defer v.Release()
	refusal := l.viewRefusal(v)
	if refusal == nil || v.Unchanged(false) != nil {
		return nil
	}
	return refusal
}

// viewRefusal connects to v and reads the refusal, if any, that the
// writable path would answer. A damaged file is an answer too: the
// writable connection would read the same pages and refuse with the same
// class.
func (l *Ledger) viewRefusal(v *storageguard.View) error {
	// An SQLite error the file's content causes (damaged pages, or a
	// header value SQLite does not support, which the schema load in
	// connectView meets first) is what the writable path answers too,
	// through fileFault; I/O and memory failures are left to it.
	if err := l.connectView(v); err != nil {
		if errors.Is(fileFault(err), storageguard.ErrNotLedgerFile) {
			return storageguard.ErrNotLedgerFile
		}
		return nil
	}
	ctx := context.Background()
	if _, err := l.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil
	}
	defer l.conn.ExecContext(ctx, "ROLLBACK")
	st, err := readSchema(ctx, l.conn)
	switch {
	case err != nil:
		if errors.Is(fileFault(classifySQLite("read schema", err)), storageguard.ErrNotLedgerFile) {
			return storageguard.ErrNotLedgerFile
		}
	case st.empty || st.okV2():
	case st.okV1():
		if safe, err := v1MigrationSafe(ctx, l.conn); err == nil && !safe {
			return stateConflict("schema v1 holds codes outside the registry")
		}
	default:
		return stateConflict("schema does not match")
	}
	return nil
}

// errBusy is SQLite's busy or locked answer, which outlasted the busy
// timeout (or, for a read-only open, is retried).
var errBusy = ErrBusy

// damaged reports SQLite's answer for a file that is not a database or
// whose pages do not hold together.
func damaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_NOTADB || code == sqlite3.SQLITE_CORRUPT
}

// classifySQLite maps SQLite failures that mean "this is not a usable
// ledger file" to StateConflict, and busy or locked to StateConflict too;
// anything else is internal.
func classifySQLite(op string, err error) error {
	if damaged(err) {
		return storageguard.ErrNotLedgerFile
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return errBusy
		case sqlite3.SQLITE_READONLY:
			return stateConflict("database is read-only")
		}
	}
	return internal(op, err)
}

// Close closes the connection, then releases the file descriptor (in that
// order, so SQLite's locks are never dropped under an open connection).
// It is idempotent: a second Close answers nil. After Close every operation
// answers ErrClosed.
func (l *Ledger) Close() error {
	l.acquire(context.Background())
	defer l.release()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.shutdown()
}

func (l *Ledger) shutdown() error {
	var err error
	if l.server != nil {
		return serverError("close", l.server.Close())
	}
	for _, s := range l.stmts {
		s.Close()
	}
	l.stmts = nil
	if l.conn != nil {
		if cerr := l.conn.Close(); cerr != nil {
			err = cerr
		}
		l.conn = nil
	}
	if l.db != nil {
		if cerr := l.db.Close(); cerr != nil && err == nil {
			err = cerr
		}
		l.db = nil
	}
	l.dropView()
	if l.guard != nil {
		l.guard.Release()
	}
	if err != nil {
		return internal("close", err)
	}
	return nil
}

// StorageInfo describes the verified connection settings.
func (l *Ledger) StorageInfo() StorageInfo { return l.info }

// SchemaVersion reports the schema version found at open (1 or 2; 0 when
// the schema is not exactly right, which only a read-only ledger admits).
func (l *Ledger) SchemaVersion() int {
	if !l.schema.exact {
		return 0
	}
	return l.schema.version
}
