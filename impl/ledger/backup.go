package ledger

import (
	"context"
	"errors"
	"path/filepath"

	"modernc.org/sqlite"
)

// Backup writes a consistent copy of the ledger to target, a file that
// must not exist yet (spec/task-state-guard.md §6.10). Target is held to
// the storage rules of a ledger (§11): its directory is private (missing
// ones are made 0700), the file is created new, 0600, never through a
// link and never over an existing file. The copy is SQLite's online
// backup of one read transaction, so writers beside it keep working and
// the copy holds every transaction that committed before it and none
// after. The copy is then opened as a ledger (its schema checked, WAL
// switched on, closed cleanly) and synced, with its directory, before
// Backup returns. On a read-only ledger (as the CLI opens the source)
// nothing of the source is written.
func (l *Ledger) Backup(target string) error {
	return l.BackupContext(context.Background(), target)
}

// BackupContext is Backup with a context whose cancellation or deadline
// ends the wait for the database.
func (l *Ledger) BackupContext(ctx context.Context, target string) error {
	g, err := openGuard(target, Options{AllowExternalACL: l.allowExternalACL, fresh: true})
	if err != nil {
		return err
	}
	copied := false
	defer func() {
		// A partial copy is removed, if the path still names it; after the
		// guard lets go of it, since Windows deletes no file a handle still
		// holds open (a failed backup there left its partial copy).
		remove := false
		if !copied {
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
	if err := syncEntryDir(filepath.Dir(g.path)); err != nil {
		return internal("sync backup directory", err)
	}
	copied = true
	return nil
}
