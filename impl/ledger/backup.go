package ledger

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// Backup writes a consistent copy of the ledger to target, a file that
// must not exist yet (spec/task-state-guard.md §6.10). Target is held to
// the storage rules of a ledger (§11): its directory is private (missing
// ones are made 0700), the file is created new, 0600, never through a
// link and never over an existing file. The copy is SQLite's online
// backup of one read transaction, so writers beside it keep working and
// the copy holds every transaction that committed before it and none
// after. The copy is made at target + ".partial" (PartialSuffix), opened
// as a ledger (its schema checked, WAL switched on, closed cleanly),
// synced, and only then renamed to target (a rename that never replaces)
// and its directory synced, before Backup returns: a power cut leaves at
// target nothing or the whole copy. Before the rename the copy must pass
// SQLite's own check of its pages (PRAGMA quick_check) and the ledger's
// schema check: a copy of a damaged ledger is refused as the doctor
// refuses the ledger (StateConflict "database file is not a valid
// ledger") and removed, so a backup job never keeps a broken copy as good.
// On a read-only ledger (as the CLI opens the source) nothing of the
// source is written. The report counts what the published copy holds.
func (l *Ledger) Backup(target string) (BackupReport, error) {
	return l.BackupContext(context.Background(), target)
}

// BackupReport says what a backup copied, or what a restore installed:
// counts only, never an id or a path. Its JSON encoding is the "backup"
// object task-state-guard prints, key for key.
type BackupReport struct {
	// Bytes is the size of the copy's file as it was published.
	Bytes int64 `json:"bytes"`
	// EventCount counts the copy's task_events rows.
	EventCount int `json:"event_count"`
	// TaskCount counts the copy's tasks rows.
	TaskCount int `json:"task_count"`
}

// PartialSuffix names the file a backup writes its copy into before it
// renames the copy to its target. One left behind (with its SQLite
// sidecars) is an interrupted backup's: a later backup to the same target
// refuses until it is removed.
const PartialSuffix = ".partial"

// errPartialExists refuses a backup whose partial copy's name is taken:
// another backup to the same target is running, or one was interrupted.
var errPartialExists = invalidInput("backup partial copy already exists")

// BackupContext is Backup with a context whose cancellation or deadline
// ends the wait for the database.
func (l *Ledger) BackupContext(ctx context.Context, target string) (BackupReport, error) {
	// The target's own text first: the partial copy's name adds to it.
	clean, err := storageguard.CheckPathText(target)
	if err != nil {
		return BackupReport{}, err
	}
	if _, err := storageguard.Lstat(clean); err == nil {
		// An existing target is refused before anything is made; the
		// rename at the end refuses one that appears meanwhile.
		return BackupReport{}, storageguard.ErrTargetExists
	}
	staged, rep, err := l.stageCopy(ctx, clean+PartialSuffix, errPartialExists, false)
	if err != nil {
		return BackupReport{}, err
	}
	defer staged.discard()
	// The target beside the partial copy, in the resolved directory.
	final := strings.TrimSuffix(staged.g.Path(), PartialSuffix)
	// The handle goes before the rename: Windows renames no file a
	// handle without delete sharing holds open.
	staged.g.Release()
	if err := storageguard.RenameNoReplace(staged.g.Path(), final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return BackupReport{}, storageguard.ErrTargetExists
		}
		return BackupReport{}, internal("rename backup into place", err)
	}
	staged.kept = true
	syncDir := storageguard.SyncEntryDir
	if hooks.syncBackupDir != nil {
		syncDir = hooks.syncBackupDir
	}
	if err := syncDir(filepath.Dir(staged.g.Path())); err != nil {
		return BackupReport{}, internal("sync backup directory", err)
	}
	return rep, nil
}

// stagedCopy is a checked, synced copy of a ledger at a name of its own,
// not yet published. Unless kept, discard removes it.
type stagedCopy struct {
	g    *storageguard.Guard
	kept bool
}

// discard removes the copy, if the path still names it and it was not
// kept; after the guard lets go of it, since Windows deletes no file a
// handle still holds open (a failed backup there left its partial copy).
func (s *stagedCopy) discard() {
	remove := false
	if !s.kept {
		info, err := storageguard.Lstat(s.g.Path())
		remove = err == nil && s.g.Holds(info)
	}
	s.g.Release()
	if remove {
		storageguard.RemoveFile(s.g.Path())
	}
}

// stageCopy writes a copy of l to path, a file it creates new under a
// ledger's storage rules (a path that exists is the exists error), by
// SQLite's online backup of one read transaction, checks it (checkCopy;
// with judgeHealth, the doctor's judgment too) and syncs it. On success
// the copy's guard still holds it.
func (l *Ledger) stageCopy(ctx context.Context, path string, exists error, judgeHealth bool) (*stagedCopy, BackupReport, error) {
	g, err := storageguard.Open(path, storageguard.Options{AllowExternalACL: l.allowExternalACL, Fresh: true})
	if errors.Is(err, storageguard.ErrTargetExists) {
		return nil, BackupReport{}, exists
	}
	if err != nil {
		return nil, BackupReport{}, err
	}
	staged := &stagedCopy{g: g}
	rep, err := l.fillCopy(ctx, g, judgeHealth)
	if err != nil {
		staged.discard()
		return nil, BackupReport{}, err
	}
	return staged, rep, nil
}

// fillCopy copies l into the new file g holds, checks and syncs it.
func (l *Ledger) fillCopy(ctx context.Context, g *storageguard.Guard, judgeHealth bool) (BackupReport, error) {
	if l.server != nil {
		return l.fillServerCopy(ctx, g, judgeHealth)
	}
	err := l.lockedReadTx(ctx, "backup", true, func(t *txn) error {
		return l.conn.Raw(func(dc any) error {
			src, ok := dc.(interface {
				NewBackup(string) (*sqlite.Backup, error)
			})
			if !ok {
				return errors.New("the SQLite driver has no online backup")
			}
			b, err := src.NewBackup(fileURI(g.Path(), "mode=rw"))
			if err != nil {
				return err
			}
			// Every page in one step: one snapshot of the source.
			if _, err := b.Step(-1); err != nil {
				b.Finish()
				return err
			}
			return b.Finish()
		})
	})
	if err != nil {
		return BackupReport{}, err
	}
	return finishCopy(ctx, g, l.allowExternalACL, judgeHealth)
}

// finishCopy checks the copy g holds (checkCopy), counts it and syncs it.
func finishCopy(ctx context.Context, g *storageguard.Guard, allowExternalACL, judgeHealth bool) (BackupReport, error) {
	rep, err := checkCopy(ctx, g.Path(), allowExternalACL, judgeHealth)
	if err != nil {
		return BackupReport{}, err
	}
	st, err := g.File().Stat()
	if err != nil {
		return BackupReport{}, internal("stat backup", err)
	}
	rep.Bytes = st.Size()
	if err := g.File().Sync(); err != nil {
		return BackupReport{}, internal("sync backup", err)
	}
	return rep, nil
}

// checkCopy opens the copy at path as a writable ledger, which checks its
// schema (spec 9.5) and switches it to WAL as every ledger is, and whose
// close folds the log back in; it then opens it read-only, has SQLite
// check every page of it (quick_check, with the doctor's quicker reading
// of the CHECK constraints) and counts its rows. A copy whose pages do not
// hold together is errNotLedgerFile, the doctor's answer for a ledger
// SQLite cannot read. With judgeHealth the doctor then reads the copy's
// rows in the same read transaction, on the pages just checked, and a copy
// it does not call healthy is errBackupUnhealthy: a restore installs only
// a ledger every command serves. The copy is private to the caller (a file
// it created new), so nothing writes to it meanwhile.
func checkCopy(ctx context.Context, path string, allowExternalACL, judgeHealth bool) (BackupReport, error) {
	w, err := Open(path, Options{AllowExternalACL: allowExternalACL, MustExist: true})
	if err != nil {
		return BackupReport{}, err
	}
	if err := w.Close(); err != nil {
		return BackupReport{}, err
	}
	c, err := Open(path, Options{AllowExternalACL: allowExternalACL, ReadOnly: true})
	if err != nil {
		return BackupReport{}, err
	}
	var rep BackupReport
	err = c.lockedReadTx(ctx, "check backup", true, func(t *txn) error {
		ok, err := runQuickCheck(t, c.schema.okV2())
		if err != nil {
			return err
		}
		if !ok {
			return storageguard.ErrNotLedgerFile
		}
		if judgeHealth {
			st, serr := readSchema(t.ctx, t)
			doc := doctorChecked(t, st, serr, true)
			// The doctor counts a failed check; a context that ended
			// made SQLite interrupt it, and is the answer.
			if err := t.ctx.Err(); err != nil {
				return err
			}
			if !doc.Healthy {
				return errBackupUnhealthy
			}
			rep.TaskCount, rep.EventCount = doc.TaskCount, doc.EventCount
			return nil
		}
		if err := t.QueryRowContext(t.ctx, "SELECT count(*) FROM tasks").Scan(&rep.TaskCount); err != nil {
			return err
		}
		return t.QueryRowContext(t.ctx, "SELECT count(*) FROM task_events").Scan(&rep.EventCount)
	})
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return BackupReport{}, err
	}
	return rep, nil
}
