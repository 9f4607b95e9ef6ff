package ledger

import (
	"context"
	"database/sql"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// txn is one transaction on the ledger's pinned connection. Statements are
// prepared once per ledger and reused.
type txn struct {
	l   *Ledger
	ctx context.Context
}

func (t *txn) stmt(query string) (*sql.Stmt, error) {
	if s, ok := t.l.stmts[query]; ok {
		return s, nil
	}
	s, err := t.l.conn.PrepareContext(t.ctx, query)
	if err != nil {
		return nil, err
	}
	t.l.stmts[query] = s
	return s, nil
}

// ExecContext runs a statement inside the transaction.
func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

// QueryContext runs a query inside the transaction.
func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// QueryRowContext runs a one-row query inside the transaction.
func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := t.stmt(query)
	if err != nil {
		// Let Scan report the error: run the query unprepared.
		return t.l.conn.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// begin opens a transaction with the given BEGIN statement and then
// checks the storage, so the check runs while the transaction's locks are
// held (for a write: after BEGIN IMMEDIATE took the write lock, before any
// write). The caller has the ledger's turn (acquire).
func (l *Ledger) begin(ctx context.Context, beginSQL string) (*txn, error) {
	if l.closed {
		return nil, ErrClosed
	}
	if l.server != nil {
		return nil, errNotOnServer
	}
	if err := ctx.Err(); err != nil {
		return nil, cancelled(err)
	}
	if _, err := l.conn.ExecContext(ctx, beginSQL); err != nil {
		// A context that ended as BEGIN ran may report the end although
		// BEGIN took effect: roll back, so that the next operation does
		// not meet "cannot start a transaction within a transaction".
		l.rollback(ctx)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cancelled(cerr)
		}
		return nil, classifySQLite("begin", err)
	}
	if l.guard != nil {
		if err := l.guard.Check(); err != nil {
			l.rollback(ctx)
			return nil, err
		}
	}
	return &txn{l: l, ctx: ctx}, nil
}

// rollback ends the connection's transaction, if it has one, whatever
// the caller's context says. An interrupt that the caller's cancellation
// set off can still reach the ROLLBACK itself (SQLite interrupts every
// statement that starts before the running ones end); it is tried again,
// so the connection is never left inside a transaction. Without one,
// ROLLBACK fails at once with an error that is not an interrupt.
func (l *Ledger) rollback(ctx context.Context) {
	end := context.WithoutCancel(ctx)
	for range 3 {
		_, err := l.conn.ExecContext(end, "ROLLBACK")
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_INTERRUPT {
			return
		}
	}
}

// finish commits when err is nil and rolls back otherwise.
// The caller's cancellation ends waits and statements, never the COMMIT
// or ROLLBACK that leaves the connection clean for the next operation.
func (l *Ledger) finish(ctx context.Context, err error, op string) error {
	end := context.WithoutCancel(ctx)
	if err != nil {
		l.rollback(ctx)
		if cerr := ctx.Err(); cerr != nil {
			return cancelled(cerr)
		}
		return classifySQLite(op, err)
	}
	if _, cerr := l.conn.ExecContext(end, "COMMIT"); cerr != nil {
		l.rollback(ctx)
		return classifySQLite(op, cerr)
	}
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction; the caller has the turn
// (or is Open, before the ledger is shared).
func (l *Ledger) write(ctx context.Context, fn func(*txn) error) error {
	if l.readOnly {
		return errReadOnly
	}
	t, err := l.begin(ctx, "BEGIN IMMEDIATE")
	if err != nil {
		return err
	}
	return l.finish(ctx, fn(t), "write")
}

// lockedReadTx takes the ledger lock and runs fn in one read transaction
// under query_only, so nothing in fn can write even by mistake (the
// guarantee of doctor and of the dry run; a read-only ledger has
// query_only on for good). With gated, a schema that reads cannot trust
// is refused first. op names the transaction in an internal error.
func (l *Ledger) lockedReadTx(ctx context.Context, op string, gated bool, fn func(*txn) error) error {
	if err := l.acquireOpen(ctx); err != nil {
		return err
	}
	defer l.release()
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	if l.server != nil {
		return errNotOnServer
	}
	if l.readOnly {
		return l.readOnlyTx(ctx, op, gated, fn)
	}
	if gated {
		if err := l.usableForReading(); err != nil {
			return err
		}
	}
	// Without the caller's cancellation: the pragma does not wait, and a
	// context ending here must be answered as such by begin, not as an
	// interrupted pragma.
	if _, err := l.conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA query_only = 1"); err != nil {
		return classifySQLite("set query_only", err)
	}
	defer l.conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA query_only = 0")
	t, err := l.begin(ctx, "BEGIN")
	if err != nil {
		return err
	}
	return l.finish(ctx, fn(t), op)
}
