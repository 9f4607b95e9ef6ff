package ledger

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
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
// target nothing or the whole copy. On a read-only ledger (as the CLI
// opens the source) nothing of the source is written.
func (l *Ledger) Backup(target string) error {
	return l.BackupContext(context.Background(), target)
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
func (l *Ledger) BackupContext(ctx context.Context, target string) error {
	// The target's own text first: the partial copy's name adds to it.
	clean, err := checkPathText(target)
	if err != nil {
		return err
	}
	if _, err := lstat(clean); err == nil {
		// An existing target is refused before anything is made; the
		// rename at the end refuses one that appears meanwhile.
		return errTargetExists
	}
	g, err := openGuard(clean+PartialSuffix, Options{AllowExternalACL: l.allowExternalACL, fresh: true})
	if errors.Is(err, errTargetExists) {
		return errPartialExists
	}
	if err != nil {
		return err
	}
	// The target beside the partial copy, in the resolved directory.
	final := strings.TrimSuffix(g.path, PartialSuffix)
	done := false
	defer func() {
		// A partial copy is removed, if the path still names it; after the
		// guard lets go of it, since Windows deletes no file a handle still
		// holds open (a failed backup there left its partial copy).
		remove := false
		if !done {
			info, err := lstat(g.path)
			remove = err == nil && info.ident == g.ident
		}
		g.release()
		if remove {
			removeFile(g.path)
		}
	}()
	err = l.lockedReadTx(ctx, "backup", true, func(t *txn) error {
		return l.conn.Raw(func(dc any) error {
			src, ok := dc.(interface {
				NewBackup(string) (*sqlite.Backup, error)
			})
			if !ok {
				return errors.New("the SQLite driver has no online backup")
			}
			b, err := src.NewBackup(fileURI(g.path, "mode=rw"))
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
		return err
	}
	// The copy must be a ledger this package opens; the open switches it
	// to WAL, as every ledger is, and the close folds the log back in.
	copy, err := Open(g.path, Options{AllowExternalACL: l.allowExternalACL, MustExist: true})
	if err != nil {
		return err
	}
	if err := copy.Close(); err != nil {
		return err
	}
	if err := g.held.f.Sync(); err != nil {
		return internal("sync backup", err)
	}
	// The handle goes before the rename: Windows renames no file a
	// handle without delete sharing holds open.
	g.release()
	if err := renameNoReplace(g.path, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errTargetExists
		}
		return internal("rename backup into place", err)
	}
	done = true
	if err := syncEntryDir(filepath.Dir(g.path)); err != nil {
		return internal("sync backup directory", err)
	}
	return nil
}
