package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"runtime/debug"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// readOnlyPauses are the pauses between attempts of a read-only open
// (divergence L4): a writer creates and removes the -wal/-shm pair one
// file after the other and holds SQLite's locks for moments, so an
// attempt that meets a half pair, a changed source or a busy lock is
// retried after a short, growing pause. Together they stay far below the
// busy timeout; a state that outlasts them is real and fails closed.
var readOnlyPauses = []time.Duration{2 * time.Millisecond, 8 * time.Millisecond, 32 * time.Millisecond, 128 * time.Millisecond}

// readOnlyPause sleeps between attempts; tests replace it.
var readOnlyPause = time.Sleep

// betweenSnapshotReads, when set by a test, runs between the two reads of
// a read-only snapshot so that a test can change the source there.
var betweenSnapshotReads func(path string)

// The transient states of a read-only open; each is retried.
var (
	errSourceChanged = stateConflict("database changed while it was being read")
	errHalfPair      = stateConflict("only one of the WAL/SHM pair is present")
	errJournal       = stateConflict("a rollback journal is present")
)

// retryableReadOnly reports whether a failed read-only attempt may
// succeed once a writer has moved on.
func retryableReadOnly(err error) bool {
	return errors.Is(err, errSourceChanged) || errors.Is(err, errHalfPair) ||
		errors.Is(err, errJournal) || errors.Is(err, errBusy)
}

// openReadOnly opens an existing ledger without creating, migrating or
// tightening anything (contract §8, read-only bullet). Each attempt
// classifies the sidecars afresh.
func (l *Ledger) openReadOnly(opts Options) error {
	for attempt := 0; ; attempt++ {
		err := l.openReadOnlyOnce()
		if err == nil || !retryableReadOnly(err) || attempt == len(readOnlyPauses) {
			return fileFault(err)
		}
		l.dropConn()
		readOnlyPause(readOnlyPauses[attempt])
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
	return stateConflict("database file is not a valid ledger")
}

// openReadOnlyOnce is one attempt of openReadOnly.
func (l *Ledger) openReadOnlyOnce() error {
	journal, wal, shm, err := l.guard.sidecarsPresent()
	if err != nil {
		return err
	}
	switch {
	case journal:
		return errJournal
	case wal && shm:
		return l.openSharedReadOnly()
	case wal || shm:
		// A writer may be creating or removing the pair right now.
		return errHalfPair
	}
	return l.openSnapshot()
}

// dropConn closes a connection a failed attempt left open; the guard and
// its descriptor stay (SQLite's locks are released by the close first).
func (l *Ledger) dropConn() {
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
	if l.db != nil {
		l.db.Close()
		l.db = nil
	}
}

// openSharedReadOnly reads the file in place with SQLite's normal locking.
func (l *Ledger) openSharedReadOnly() error {
	if err := l.connect(fileURI(l.guard.path, "mode=ro")); err != nil {
		return err
	}
	if err := l.setBusyAndKeys(); err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := l.conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		return classifySQLite("set query_only", err)
	}
	mode, err := l.pragmaText("PRAGMA journal_mode")
	if err != nil {
		return classifySQLite("read journal_mode", err)
	}
	if mode != "wal" {
		return invalidInput("database is not in WAL mode")
	}
	if err := l.guard.check(); err != nil {
		return err
	}
	return l.loadSchemaReadOnly()
}

// loadSchemaReadOnly records the schema status in one read transaction.
func (l *Ledger) loadSchemaReadOnly() error {
	ctx := context.Background()
	if _, err := l.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return classifySQLite("begin", err)
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

// openSnapshot reads a cleanly closed file twice through the held
// descriptor, requires both reads (identity, times, size, SHA-256) to
// agree, and loads the private copy into an in-memory database.
func (l *Ledger) openSnapshot() error {
	g := l.guard
	before, err := lstat(g.path)
	if err != nil {
		return stateConflict("database file disappeared")
	}
	if err := checkDBShape(before); err != nil {
		return err
	}
	if before.ident != g.ident {
		return errSourceChanged
	}
	if before.size > maxSnapshotBytes {
		return invalidInput("database is larger than the read-only snapshot limit")
	}
	first, err := readAllAt(g.held.f, before.size)
	if err != nil {
		return internal("read database", err)
	}
	// The first copy is hashed on another core while the second read
	// streams through its own hash.
	firstSum := make(chan [sha256.Size]byte, 1)
	go func() { firstSum <- sha256.Sum256(first) }()
	if betweenSnapshotReads != nil {
		betweenSnapshotReads(g.path)
	}
	// The second read is only hashed, in small chunks, so it never holds
	// another whole copy of the file.
	sum2, err := hashAt(g.held.f, before.size)
	sum1 := <-firstSum // before anything wipes first
	if err != nil {
		wipe(first)
		return internal("read database", err)
	}
	after, err := fstat(g.held.f)
	if err != nil {
		wipe(first)
		return internal("stat database", err)
	}
	_, wal, shm, serr := g.sidecarsPresent()
	if serr != nil || wal || shm || after.ident != before.ident || after.size != before.size ||
		after.modTime != before.modTime || after.chTime != before.chTime || !bytes.Equal(sum1[:], sum2) {
		wipe(first)
		return errSourceChanged
	}
	if len(first) < 100 || !bytes.HasPrefix(first, []byte("SQLite format 3\x00")) {
		wipe(first)
		return stateConflict("database file is not a valid ledger")
	}
	if first[18] != 2 || first[19] != 2 {
		wipe(first)
		return invalidInput("database is not in WAL mode")
	}
	// Only the copy's WAL header bytes change: an in-memory database
	// cannot be in WAL mode.
	first[18], first[19] = 1, 1
	l.snapshot = first
	// The source is no longer needed: drop our descriptor now, before the
	// in-memory connection exists (it never touches the file).
	g.release()
	l.guard = nil

	if err := l.connect("file:ledger-snapshot?mode=memory"); err != nil {
		return err
	}
	err = l.conn.Raw(func(dc any) error {
		d, ok := dc.(interface{ Deserialize([]byte) error })
		if !ok {
			return invalidInput("driver cannot load a private copy")
		}
		return d.Deserialize(l.snapshot)
	})
	// SQLite now owns its own copy; ours is no longer needed. Its pages go
	// back to the OS now rather than after some later collection, so the
	// reads that follow do not stack on top of a dead copy (peak RSS).
	wipe(l.snapshot)
	l.snapshot = nil
	debug.FreeOSMemory()
	l.inMemory = true
	if err != nil {
		var ce *classError
		if errors.As(err, &ce) {
			return err
		}
		return classifySQLite("load snapshot", err)
	}
	if err := l.setBusyAndKeys(); err != nil {
		return err
	}
	// The pages already sit in the copy, so a cache miss is one page copy:
	// a 64 KiB page cache instead of the default 2 MB touches less fresh
	// memory (peak RSS, and faster single passes such as quick_check).
	if _, err := l.conn.ExecContext(context.Background(), "PRAGMA cache_size = -64"); err != nil {
		return classifySQLite("set cache_size", err)
	}
	if _, err := l.conn.ExecContext(context.Background(), "PRAGMA query_only = 1"); err != nil {
		return classifySQLite("set query_only", err)
	}
	return l.loadSchemaReadOnly()
}
