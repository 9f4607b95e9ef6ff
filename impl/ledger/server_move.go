package ledger

import (
	"context"
	"errors"

	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// Moving a ledger between engines: Backup from a server ledger writes a
// SQLite ledger (fillServerCopy), and RestoreOnServer loads one into an
// empty server ledger. Both copy every task row and every event with its
// sequence, from one snapshot of the source that the doctor called
// healthy, and each row crosses through the row checks.

// errServerNotEmpty refuses a restore into a server ledger that holds
// anything: a server keeps no set-aside copy, so a restore never
// replaces rows (load into a new schema, or prune or drop the old one).
var errServerNotEmpty = stateConflict("database ledger is not empty")

// fillServerCopy is fillCopy for a server ledger: the new file g holds
// becomes a SQLite ledger (Open makes its schema) that receives, in one
// transaction, every task and event of one read-only snapshot of the
// server in which the doctor's pass found the ledger healthy; anything
// else is refused as SQLite's backup refuses a copy whose pages do not
// hold (storageguard.ErrNotLedgerFile), since a copy rewritten row by row
// is only as good as the rows. The copy is then checked, counted and
// synced as a SQLite backup's copy is.
func (l *Ledger) fillServerCopy(ctx context.Context, g *storageguard.Guard, judgeHealth bool) (BackupReport, error) {
	w, err := Open(g.Path(), Options{AllowExternalACL: l.allowExternalACL, MustExist: true})
	if err != nil {
		return BackupReport{}, err
	}
	var tasks, events int
	err = l.serverRead(ctx, func(tx serverstore.ReadTx) error {
		rep, err := serverDoctorIn(tx, l.doctorPage())
		if err != nil {
			return err
		}
		if !rep.Healthy {
			return storageguard.ErrNotLedgerFile
		}
		err = w.write(ctx, func(t *txn) error {
			// Children may come before their parents: the keys are
			// checked at the commit.
			if _, err := t.ExecContext(t.ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
				return err
			}
			// In pages, each a short statement of the one snapshot: a
			// statement streaming rows to a slower writer would run
			// into the busy timeout.
			for after := ""; ; {
				page, err := tx.TasksAfter(after, copyPageRows)
				if err != nil {
					return err
				}
				for _, row := range page {
					task, err := taskFromRow(row)
					if err != nil {
						return err
					}
					tasks++
					if _, err := t.ExecContext(t.ctx, `INSERT INTO tasks (`+taskColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, taskArgs(task)...); err != nil {
						return err
					}
					after = task.ID
				}
				if len(page) < copyPageRows {
					break
				}
			}
			for after := int64(0); ; {
				page, err := tx.EventsAfter(after, copyPageRows)
				if err != nil {
					return err
				}
				for _, ev := range page {
					events++
					if _, err := t.ExecContext(t.ctx, `INSERT INTO task_events (sequence, task_id, event_kind, from_value, to_value, occurred_at, code) VALUES (?, ?, ?, ?, ?, ?, ?)`,
						ev.Sequence, ev.TaskID, ev.Kind, textOrNull(ev.From), ev.To, ev.OccurredAt, textOrNull(ev.Code)); err != nil {
						return err
					}
					after = ev.Sequence
				}
				if len(page) < copyPageRows {
					return nil
				}
			}
		})
		if err == nil && (tasks != rep.TaskCount || events != rep.EventCount) {
			err = internal("backup", errors.New("rows copied differ from the rows the doctor counted"))
		}
		return err
	})
	if cerr := w.Close(); err == nil && cerr != nil {
		err = internal("close backup", cerr)
	}
	if err != nil {
		return BackupReport{}, err
	}
	rep, err := finishCopy(ctx, g, l.allowExternalACL, judgeHealth)
	if err == nil && (rep.TaskCount != tasks || rep.EventCount != events) {
		err = internal("backup", errors.New("the copy holds other rows than were copied"))
	}
	if err != nil {
		return BackupReport{}, err
	}
	return rep, nil
}

// copyPageRows is how many rows one read of a server backup takes.
const copyPageRows = 4096

// RestoreOnServer loads the SQLite ledger at from into the server ledger
// connect opens (OpenOnServer's settings; an engine package calls it),
// which must hold no task and no event (else StateConflict "database
// ledger is not empty"). The backup is opened read-only; in one read
// transaction of it SQLite's quick_check must pass (else StateConflict
// "database file is not a valid ledger") and the doctor must call it
// healthy (else StateConflict "backup is not a healthy ledger"), as
// Restore answers, before the server is connected to (a backup in schema
// v1 is judged as the v2 Restore's migration of its copy makes of it, and
// one that migration refuses is refused as Restore refuses it: spec 20.4
// item 5); then its rows are
// loaded in one write transaction of the server that first keeps every
// other writer out: every task and every event, events keeping their
// sequences. A failure loads nothing. The report counts what the server
// ledger then holds; Bytes is the size of the backup file read.
func RestoreOnServer(ctx context.Context, from string, opts Options, connect func(serverstore.Settings) (serverstore.Store, error)) (BackupReport, error) {
	if opts.ReadOnly {
		return BackupReport{}, errReadOnly
	}
	// The backup first: one that is missing, damaged or unhealthy is
	// refused before the server is touched, so a refused restore makes no
	// schema in a database that had none.
	src, err := Open(from, Options{ReadOnly: true, AllowExternalACL: opts.AllowExternalACL, BusyTimeout: opts.BusyTimeout})
	if err != nil {
		return BackupReport{}, err
	}
	defer src.Close()
	var rep BackupReport
	err = src.lockedReadTx(ctx, "restore", true, func(t *txn) error {
		// Checked as Restore checks its copy: pages that do not hold
		// are the damaged file's refusal, rows that break the rules
		// the unhealthy backup's. A backup in schema v1 is judged, and
		// its rows loaded, as the migration of Restore's writable check
		// leaves it: as the v2 it becomes, with the same rows (the gate
		// of this read has refused a v1 the migration refuses).
		st, serr := schemaAfterMigration(t)
		ok, err := runQuickCheck(t, serr == nil && st.okV2())
		if err != nil {
			return err
		}
		if !ok {
			return storageguard.ErrNotLedgerFile
		}
		doc := doctorChecked(t, st, serr, true)
		if err := t.ctx.Err(); err != nil {
			return err
		}
		if !doc.Healthy {
			return errBackupUnhealthy
		}
		dst, err := OpenOnServer(opts, connect)
		if err != nil {
			return err
		}
		defer dst.Close()
		return dst.serverWrite(ctx, func(w serverstore.WriteTx) error {
			if err := w.LockTasks(); err != nil {
				return err
			}
			if tasks, events, err := w.Counts(); err != nil || tasks != 0 || events != 0 {
				if err == nil {
					err = errServerNotEmpty
				}
				return err
			}
			if err := loadTasks(t, w); err != nil {
				return err
			}
			if err := loadEvents(t, w); err != nil {
				return err
			}
			tasks, events, err := w.Counts()
			if err != nil {
				return err
			}
			if tasks != doc.TaskCount || events != doc.EventCount {
				return internal("restore", errors.New("rows loaded differ from the rows the doctor counted"))
			}
			rep.TaskCount, rep.EventCount = tasks, events
			return nil
		})
	})
	if err != nil {
		return BackupReport{}, err
	}
	if src.guard != nil {
		st, err := src.guard.File().Stat()
		if err != nil {
			return BackupReport{}, internal("stat backup", err)
		}
		rep.Bytes = st.Size()
	}
	return rep, nil
}

// loadTasks hands every task of the SQLite transaction t, each through
// the row checks, to the server's load.
func loadTasks(t *txn, w serverstore.WriteTx) error {
	rows, err := t.QueryContext(t.ctx, `SELECT `+taskColumns+` FROM tasks ORDER BY rowid`)
	if err != nil {
		return err
	}
	defer rows.Close()
	_, err = w.LoadTasks(func() (serverstore.Row, bool, error) {
		if !rows.Next() {
			return nil, false, rows.Err()
		}
		task, err := scanTask(rows)
		if err != nil {
			return nil, false, err
		}
		row := serverstore.Row{}
		for _, v := range taskArgs(task) {
			row = append(row, v)
		}
		return row, true, nil
	})
	return err
}

// loadEvents hands every event of the SQLite transaction t, in sequence
// order, to the server's load.
func loadEvents(t *txn, w serverstore.WriteTx) error {
	rows, err := t.QueryContext(t.ctx, `SELECT sequence, task_id, event_kind, from_value, to_value, occurred_at, code FROM task_events ORDER BY sequence`)
	if err != nil {
		return err
	}
	defer rows.Close()
	_, err = w.LoadEvents(func() (serverstore.Event, bool, error) {
		if !rows.Next() {
			return serverstore.Event{}, false, rows.Err()
		}
		var ev serverstore.Event
		if err := rows.Scan(&ev.Sequence, &ev.TaskID, &ev.Kind, &ev.From, &ev.To, &ev.OccurredAt, &ev.Code); err != nil {
			return serverstore.Event{}, false, err
		}
		return ev, true, nil
	})
	return err
}
