package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
	"modernc.org/sqlite/vfs"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// readOnlyPauses are the pauses between attempts of a read-only read
// (divergence L4): a writer creates and removes the -wal/-shm pair one
// file after the other, checkpoints and holds SQLite's locks for moments,
// so an attempt that meets a rollback journal, files that changed under
// the read or a busy lock is retried after a short, growing pause.
// Together they stay far below the busy timeout; a state that outlasts
// them is real and fails closed.
var readOnlyPauses = []time.Duration{2 * time.Millisecond, 8 * time.Millisecond, 32 * time.Millisecond, 128 * time.Millisecond}

// retryableReadOnly reports whether a failed read-only attempt may
// succeed once a writer has moved on.
func retryableReadOnly(err error) bool {
	return errors.Is(err, storageguard.ErrSourceChanged) || errors.Is(err, storageguard.ErrJournal) || errors.Is(err, errBusy) || errors.Is(err, storageguard.ErrHeaderIncomplete)
}

// openReadOnly opens an existing ledger without creating, migrating or
// tightening anything (spec/task-state-guard.md §12): it makes the first
// view and reads the schema through it.
func (l *Ledger) openReadOnly() error {
	return l.readOnlyTx(context.Background(), "open", false, nil)
}

// readOnlyTx runs fn (nil: nothing beyond the view's schema read) in one
// read transaction of a read-only ledger, with up to len(readOnlyPauses)
// retries. The caller has the turn, or is Open. A ctx that ends ends the
// waits and the read, as it does a writable ledger's.
//
// An attempt that met files changing under it keeps the database's read
// lock through the pause and into the next attempt (spec 12.4): sidecars a writer made during that attempt then stay (no writer
// can close cleanly and remove them), and the next attempt finds them and
// locks the -shm. Dropped in the pause, the lock would let a session that
// ends just then remove them, and a fleet of short writer sessions could
// make every attempt meet the same change.
func (l *Ledger) readOnlyTx(ctx context.Context, op string, gated bool, fn func(*txn) error) error {
	pinned := false
	defer func() {
		if pinned {
			l.guard.UnlockDatabaseShared()
		}
	}()
	for attempt := 0; ; attempt++ {
		err := l.readOnlyAttempt(ctx, op, gated, fn, &pinned)
		if pinned && !errors.Is(err, storageguard.ErrSourceChanged) {
			l.guard.UnlockDatabaseShared()
			pinned = false
		}
		if err == nil || !retryableReadOnly(err) || attempt == len(readOnlyPauses) {
			return fileFault(err)
		}
		if cerr := ctx.Err(); cerr != nil {
			return cancelled(cerr)
		}
		hooks.readOnlyPause(readOnlyPauses[attempt])
	}
}

// readOnlyAttempt reuses the current view when the files are exactly as it
// found them, else makes a new one (and a new connection: SQLite's page
// cache belongs to the old view). It holds the view's read locks while
// reading, and afterwards requires the files to be unchanged, so that no
// writer can have torn what was read.
//
// Once it holds the database's read lock it takes one more hold on it for
// readOnlyTx to keep across the pause, unless *pinned says one is held.
func (l *Ledger) readOnlyAttempt(ctx context.Context, op string, gated bool, fn func(*txn) error, pinned *bool) (err error) {
	if l.closed {
		return ErrClosed
	}
	v := l.view
	if v != nil {
		if err := v.Lock(ctx, l.info.BusyTimeoutMS); err != nil {
			return err
		}
		if v.Unchanged(true) != nil {
			v.Release()
			l.dropView()
			v = nil
		}
	}
	if v == nil {
		if v, err = storageguard.NewViewContext(ctx, l.guard, l.info.BusyTimeoutMS); err != nil {
			return err
		}
		if err := l.connectView(v); err != nil {
			v.Release()
			l.dropView()
			return err
		}
	}
	if v.DBLocked() && !*pinned {
		// Cannot wait or fail: v holds this lock, so this only counts.
		if err := l.guard.LockDatabaseShared(); err != nil {
			v.Release()
			return err
		}
		*pinned = true
	}
	defer v.Release()
	if l.schemaOf != v {
		if err := l.loadSchemaReadOnly(); err != nil {
			return l.settle(v, err)
		}
		l.schemaOf = v
	}
	if fn == nil {
		return l.settle(v, nil)
	}
	if gated {
		if err := l.usableForReading(); err != nil {
			return err
		}
	}
	t, err := l.begin(ctx, "BEGIN")
	if err != nil {
		return l.settle(v, err)
	}
	if hooks.duringReadOnlyRead != nil {
		hooks.duringReadOnlyRead(l.guard.Path())
	}
	err = l.finish(ctx, fn(t), op)
	if hooks.afterReadOnlyRead != nil {
		hooks.afterReadOnlyRead(l.guard.Path())
	}
	return l.settle(v, err)
}

// settle checks, after a read, that the files did not change under it: a
// change outranks whatever the read returned (it may have read a torn
// database) and drops the view.
func (l *Ledger) settle(v *storageguard.View, err error) error {
	if cerr := v.Unchanged(false); cerr != nil {
		l.dropView()
		return cerr
	}
	return err
}

// connectView registers v as a read-only VFS and connects to it.
func (l *Ledger) connectView(v *storageguard.View) error {
	// The ledger owns the view from here, so that dropView closes it on
	// every failure below.
	l.view = v
	name, fsys, err := vfs.New(v.FS())
	if err != nil {
		return internal("register read-only view", err)
	}
	l.viewFS = fsys
	if err := l.connect("file:" + storageguard.ViewFileName + "?vfs=" + name + "&mode=ro"); err != nil {
		return err
	}
	if err := l.setBusyAndKeys(); err != nil {
		return err
	}
	ctx := context.Background()
	// Temporary tables and sorts stay in memory: the view's VFS cannot
	// create files, and nothing may be created anyway.
	for _, q := range []string{"PRAGMA temp_store = MEMORY", "PRAGMA query_only = 1"} {
		if _, err := l.conn.ExecContext(ctx, q); err != nil {
			return classifySQLite("configure read-only connection", err)
		}
	}
	if got, err := l.pragmaInt("PRAGMA temp_store"); err != nil || got != 2 {
		return internal("verify temp_store", errOrMismatch(err))
	}
	if got, err := l.pragmaInt("PRAGMA query_only"); err != nil || got != 1 {
		return internal("verify query_only", errOrMismatch(err))
	}
	return nil
}

// dropView closes the connection, the VFS and the view (in that order:
// the VFS may not go while a connection reads through it).
func (l *Ledger) dropView() {
	l.dropConn()
	if l.viewFS != nil {
		l.viewFS.Close()
		l.viewFS = nil
	}
	if l.view != nil {
		l.view.Close()
		l.view = nil
	}
	l.schemaOf = nil
}

// dropConn closes the connection and its prepared statements.
func (l *Ledger) dropConn() {
	for _, s := range l.stmts {
		s.Close()
	}
	l.stmts = map[string]*sql.Stmt{}
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
	if l.db != nil {
		l.db.Close()
		l.db = nil
	}
}

// fileFault turns an SQLite error met while opening a file into
// StateConflict: an unsupported header value or a mangled schema makes some
// statement of the open fail, and that is the file's fault, not an
// internal error. Out-of-memory and I/O failures stay internal.
func fileFault(err error) error {
	var ie *internalError
	var se *sqlite.Error
	if !errors.As(err, &ie) || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL:
		return err
	}
	return storageguard.ErrNotLedgerFile
}

// loadSchemaReadOnly records the schema status in one read transaction.
func (l *Ledger) loadSchemaReadOnly() error {
	ctx := context.Background()
	if _, err := l.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return classifySQLite("begin", err)
	}
	if hooks.duringReadOnlyRead != nil {
		hooks.duringReadOnlyRead(l.guard.Path())
	}
	st, err := readSchema(ctx, l.conn)
	if err == nil && st.okV1() {
		// Whether a v1 file may be previewed depends on its content.
		var safe bool
		safe, err = v1MigrationSafe(ctx, l.conn)
		st.v1Unsafe = !safe
	}
	l.conn.ExecContext(ctx, "ROLLBACK")
	if err != nil {
		return classifySQLite("read schema", err)
	}
	if st.empty {
		return stateConflict("database holds no ledger")
	}
	l.schema = st
	return nil
}
