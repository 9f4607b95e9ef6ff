package ledger

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"modernc.org/sqlite"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// RestorePartialSuffix names the checked copy of the backup that Restore
// makes beside the ledger before it installs it. One left behind is an
// interrupted restore's: a later restore of the same ledger refuses until
// it is removed.
const RestorePartialSuffix = ".restoring"

// SetAsideSuffix names the copy of the ledger Restore replaces: the
// database is kept as PATH + SetAsideSuffix and its -wal and -shm as
// PATH + SetAsideSuffix + "-wal" and "-shm", so that the set-aside files
// are a ledger with its own log, which a mistaken restore can be undone
// from (restore --from PATH.before-restore).
const SetAsideSuffix = ".before-restore"

var (
	errRestorePartialExists = invalidInput("restore partial copy already exists")
	errSetAsideExists       = invalidInput("a ledger set aside by an earlier restore exists")
	errRestoreOntoItself    = invalidInput("restore source is the ledger itself")
	// errLedgerInUse: the restore could not lock the ledger for itself
	// within the busy timeout, because another connection has it open.
	errLedgerInUse = stateConflict("database is open in another connection")
	// errLedgerAppeared: a missing ledger was created while the restore
	// made its copy; the restore installs nothing over it.
	errLedgerAppeared = stateConflict("database appeared while it was restored")
	// errBackupUnhealthy: the backup's pages and schema hold, but the
	// doctor finds rows that break the ledger's rules in it.
	errBackupUnhealthy = stateConflict("backup is not a healthy ledger")
)

// Restore replaces the ledger at path with the backup at from (spec
// §6.14). The backup is opened read-only and copied beside the ledger
// (PATH + RestorePartialSuffix), checked as Backup checks its copy, judged
// by the doctor (a copy it does not call healthy is refused with
// StateConflict "backup is not a healthy ledger") and synced. A missing ledger is then made by renaming that copy into place
// (its directories made as Open makes them). An existing ledger is locked
// for this call alone (refused with StateConflict "database is open in
// another connection" while any other connection has it open), copied
// aside with its -wal and -shm (SetAsideSuffix), and overwritten page by
// page by SQLite's own restore in one transaction of the ledger, so a
// crash or power cut leaves the old ledger or the restored one and no
// log of the old ledger is ever replayed on the restored pages. The
// report counts what the restored ledger holds.
func Restore(path, from string, opts Options) (BackupReport, error) {
	return RestoreContext(context.Background(), path, from, opts)
}

// RestoreContext is Restore with a context whose cancellation or deadline
// ends the wait for the backup and the ledger.
func RestoreContext(ctx context.Context, path, from string, opts Options) (BackupReport, error) {
	if _, err := opts.busyTimeoutMS(); err != nil {
		return BackupReport{}, err
	}
	clean, err := storageguard.CheckPathText(path)
	if err != nil {
		return BackupReport{}, err
	}
	src, err := Open(from, Options{ReadOnly: true, AllowExternalACL: opts.AllowExternalACL, BusyTimeout: opts.BusyTimeout})
	if err != nil {
		return BackupReport{}, err
	}
	defer src.Close()
	if info, err := storageguard.Lstat(clean); err == nil && src.guard.Holds(info) {
		return BackupReport{}, errRestoreOntoItself
	}
	staged, rep, err := src.stageCopy(ctx, clean+RestorePartialSuffix, errRestorePartialExists, true)
	if err != nil {
		return BackupReport{}, err
	}
	defer staged.discard()
	final := strings.TrimSuffix(staged.g.Path(), RestorePartialSuffix)
	if _, err := storageguard.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		return rep, installMissing(staged, final)
	} else if err != nil {
		return BackupReport{}, internal("stat database", err)
	}
	size, err := installOver(ctx, staged, final, opts)
	if err != nil {
		return BackupReport{}, err
	}
	rep.Bytes = size
	return rep, nil
}

// installMissing makes the missing ledger final from the staged copy: a
// -wal or -shm left where no database is (a removed ledger's) is moved
// aside first, so that no log of another database lies beside the copy;
// then the copy is renamed into place by a rename that never replaces
// and the directory synced, as Backup publishes its copy.
func installMissing(staged *stagedCopy, final string) error {
	dir := filepath.Dir(final)
	moved := false
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := storageguard.Lstat(final + suffix); err != nil {
			continue
		}
		if err := storageguard.RenameNoReplace(final+suffix, final+SetAsideSuffix+suffix); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return errSetAsideExists
			}
			return internal("set aside sidecar", err)
		}
		moved = true
	}
	if moved {
		if err := storageguard.SyncEntryDir(dir); err != nil {
			return internal("sync database directory", err)
		}
	}
	staged.g.Release()
	if hooks.beforeInstallMissing != nil {
		hooks.beforeInstallMissing(final)
	}
	if err := storageguard.RenameNoReplace(staged.g.Path(), final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errLedgerAppeared
		}
		return internal("rename restored copy into place", err)
	}
	staged.kept = true
	if err := storageguard.SyncEntryDir(dir); err != nil {
		return internal("sync database directory", err)
	}
	return nil
}

// installOver restores the staged copy into the existing ledger final and
// returns the restored file's size. It opens the ledger with SQLite in
// exclusive locking mode: the first read then takes SQLite's exclusive
// lock on the database file, which every other connection to a ledger
// (in WAL mode, each holds a shared lock on the file for as long as it is
// open) and every read-only view (while it reads) keeps out; the busy
// timeout bounds the wait. The wal-index lives in this connection's heap,
// so the -shm is not used. Under that lock the database and its -wal and
// -shm are copied aside and synced, and then SQLite's restore writes
// every page of the copy in one transaction of the ledger (synchronous
// FULL), which is checkpointed into the file when the connection closes.
func installOver(ctx context.Context, staged *stagedCopy, final string, opts Options) (int64, error) {
	g, err := storageguard.Open(final, storageguard.Options{MustExist: true, AllowExternalACL: opts.AllowExternalACL})
	if err != nil {
		return 0, err
	}
	// The descriptor goes only after SQLite's connection closed, so that
	// its locks are never dropped under it.
	defer g.Release()
	db, err := sql.Open("sqlite", fileURI(g.Path(), "mode=rw"))
	if err != nil {
		return 0, internal("open database", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return 0, restoreFault("open database", err)
	}
	busyMS, _ := opts.busyTimeoutMS() // checked by RestoreContext
	err = restoreLocked(ctx, conn, g, staged, final, busyMS)
	cerr := conn.Close()
	if dberr := db.Close(); cerr == nil {
		cerr = dberr
	}
	if err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, internal("close restored ledger", cerr)
	}
	st, err := g.File().Stat()
	if err != nil {
		return 0, internal("stat database", err)
	}
	return st.Size(), nil
}

// restoreFault classifies a failure of the restore's own connection: busy
// is another connection holding the ledger open.
func restoreFault(op string, err error) error {
	if sqliteBusy(err) {
		return errLedgerInUse
	}
	return classifySQLite(op, err)
}

// restoreLocked is installOver's work on its connection.
func restoreLocked(ctx context.Context, conn *sql.Conn, g *storageguard.Guard, staged *stagedCopy, final string, busyMS int) error {
	for _, q := range []string{
		"PRAGMA busy_timeout = " + strconv.Itoa(busyMS),
		"PRAGMA locking_mode = EXCLUSIVE",
		"PRAGMA synchronous = FULL",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return restoreFault("set up restore", err)
		}
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA locking_mode").Scan(&mode); err != nil || !strings.EqualFold(mode, "exclusive") {
		return internal("verify locking_mode", errOrMismatch(err))
	}
	var sync int
	if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
		return internal("verify synchronous", errOrMismatch(err))
	}
	// The first read takes the lock (and reads the ledger's own -wal into
	// the heap wal-index; nothing is written).
	var objects int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&objects); err != nil {
		return restoreFault("lock database", err)
	}
	// The path must still name the file the guard holds, now that no one
	// else can change it.
	if err := g.Check(); err != nil {
		return err
	}
	aside, err := setAside(g, final)
	if err != nil {
		return err
	}
	err = conn.Raw(func(dc any) error {
		dst, ok := dc.(interface {
			NewRestore(string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("the SQLite driver has no restore")
		}
		b, err := dst.NewRestore(fileURI(staged.g.Path(), "mode=ro&immutable=1"))
		if err != nil {
			return err
		}
		if _, err := b.Step(-1); err != nil {
			b.Finish()
			return err
		}
		return b.Finish()
	})
	if err != nil {
		// Nothing of the ledger changed: the copies set aside go too.
		aside.remove()
		return restoreFault("restore", err)
	}
	// The restore committed; folding it into the file now is tidiness
	// (the close checkpoints too), so its failure is no failure. So is
	// removing the old -shm (set aside), which no connection uses while
	// the lock is held and the next one would rebuild anyway.
	conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	if info, err := storageguard.Lstat(final + "-shm"); err == nil && info.RegularFile() {
		storageguard.RemoveFile(final + "-shm")
	}
	return nil
}

// asideFiles are the copies setAside made.
type asideFiles []string

func (a asideFiles) remove() {
	for _, p := range a {
		storageguard.RemoveFile(p)
	}
}

// setAside copies the ledger final (through the descriptor g holds, never
// a new one: closing one would drop this process's SQLite locks) and its
// -wal and -shm, if present and not empty, to new files named with SetAsideSuffix, and
// syncs them and their directory. A name that is taken refuses the
// restore before anything is written.
func setAside(g *storageguard.Guard, final string) (asideFiles, error) {
	target := final + SetAsideSuffix
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := storageguard.Lstat(target + suffix); err == nil {
			return nil, errSetAsideExists
		}
	}
	var made asideFiles
	fail := func(err error) (asideFiles, error) {
		made.remove()
		return nil, err
	}
	copyTo := func(dst string, from io.Reader) error {
		f, err := storageguard.CreatePrivate(dst)
		if errors.Is(err, storageguard.ErrFileAppeared) {
			return errSetAsideExists
		}
		if err != nil {
			return err
		}
		made = append(made, dst)
		_, err = io.Copy(f, from)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return internal("set aside ledger", err)
		}
		return nil
	}
	st, err := g.File().Stat()
	if err != nil {
		return fail(internal("stat database", err))
	}
	if err := copyTo(target, io.NewSectionReader(g.File(), 0, st.Size())); err != nil {
		return fail(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		info, err := storageguard.Lstat(final + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !info.RegularFile() {
			return fail(invalidInput("sidecar cannot be opened safely"))
		}
		if info.Size() == 0 {
			// Empty, it holds nothing (this restore's own connection
			// makes an empty -wal where none was).
			continue
		}
		f, err := storageguard.OpenNoFollow(final + suffix)
		if err != nil {
			return fail(invalidInput("sidecar cannot be opened safely"))
		}
		err = copyTo(target+suffix, f)
		f.Close()
		if err != nil {
			return fail(err)
		}
	}
	if err := storageguard.SyncEntryDir(filepath.Dir(final)); err != nil {
		return fail(internal("sync database directory", err))
	}
	return made, nil
}
