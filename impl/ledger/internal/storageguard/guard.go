package storageguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Guard is the storage boundary of one open ledger (spec/task-state-guard.md §11): the
// resolved database path, the remembered identity of the file, and the
// shared descriptor that keeps it open for the ledger's lifetime.
type Guard struct {
	path     string // resolved parent + final name
	readOnly bool
	ident    fileIdent
	held     *heldFile
	model    string // StorageInfo.PermissionModel
}

// Open checks (and, when writable, prepares) the storage for path.
func Open(path string, opts Options) (*Guard, error) {
	clean, err := CheckPathText(path)
	if err != nil {
		return nil, err
	}
	if err := platformPreflight(opts); err != nil {
		return nil, err
	}
	dir, missing, err := resolveParent(clean)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 && (opts.ReadOnly || opts.MustExist || !CanCreateDirs) {
		return nil, invalidInput("database directory does not exist")
	}
	if err := checkAncestors(dir, len(missing) == 0); err != nil {
		return nil, err
	}
	// The directories made below are on the file system of the last one
	// that exists, so one look before anything is made serves them all.
	if err := checkLocalFS(dir); err != nil {
		return nil, err
	}
	for i, name := range missing {
		dir = filepath.Join(dir, name)
		if Hooks.BeforeMakeDir != nil {
			Hooks.BeforeMakeDir(dir)
		}
		if err := makePrivateDir(dir); err != nil {
			return nil, err
		}
		// The directory may have been made meanwhile by someone else, who
		// could then swap what is below it: check it as an ancestor (or as
		// the final directory) before creating anything inside it.
		if err := checkAncestors(dir, i == len(missing)-1); err != nil {
			return nil, err
		}
	}
	if err := checkFinalDir(dir, givenDir(clean), opts.ReadOnly); err != nil {
		return nil, err
	}
	g := &Guard{path: filepath.Join(dir, filepath.Base(clean)), readOnly: opts.ReadOnly, model: permissionModel}

	info, err := Lstat(g.path)
	if opts.Fresh && !errors.Is(err, fs.ErrNotExist) {
		return nil, ErrTargetExists
	}
	if errors.Is(err, fs.ErrNotExist) {
		if opts.ReadOnly || opts.MustExist {
			return nil, invalidInput("database does not exist")
		}
		if Hooks.BeforeCreateFile != nil {
			Hooks.BeforeCreateFile(g.path)
		}
		f, cerr := CreatePrivate(g.path)
		switch {
		case cerr == nil:
			st, err := fstat(f)
			if err != nil {
				f.Close()
				return nil, internal("stat database", err)
			}
			g.ident = st.ident
			g.held = holdFile(f, st.ident)
		case errors.Is(cerr, ErrFileAppeared) && opts.Fresh:
			return nil, ErrTargetExists
		case errors.Is(cerr, ErrFileAppeared):
			// Another opener (a worker started at the same moment)
			// created the file between the lstat and the create: open
			// it as the existing file it now is, with every check an
			// existing ledger gets. A file that is gone again was
			// removed under the open, which is a conflict.
			info, err = Lstat(g.path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, stateConflict("database file changed while opening")
			}
		default:
			return nil, cerr
		}
	}
	switch {
	case g.held != nil:
	case err != nil:
		return nil, internal("stat database", err)
	default:
		if err := checkDBShape(info); err != nil {
			return nil, err
		}
		if h := lookupHeld(info.ident); h != nil {
			g.held = h
		} else {
			f, err := OpenNoFollow(g.path)
			if err != nil {
				return nil, invalidInput("database file cannot be opened safely")
			}
			st, err := fstat(f)
			if err != nil || st.ident != info.ident {
				f.Close()
				return nil, stateConflict("database file changed while opening")
			}
			g.held = holdFile(f, st.ident)
		}
		g.ident = info.ident
		if err := g.privateMode(g.held.f, info); err != nil {
			g.release()
			return nil, err
		}
	}
	if err := g.checkSidecars(); err != nil {
		g.release()
		return nil, err
	}
	return g, nil
}

// ErrTargetExists refuses a backup target that exists: a backup never
// overwrites a file.
var ErrTargetExists = invalidInput("backup target already exists")

// ErrFileAppeared is createPrivate's answer when the file exists by the
// time it is created; openGuard opens it as an existing file.
var ErrFileAppeared = errors.New("database file appeared while opening")

// checkDBShape refuses a database path that is a link, not a regular file,
// or a file with more than one name.
func checkDBShape(info FileInfo) error {
	if info.isLink || !info.isReg {
		return invalidInput("database path is not a regular file")
	}
	if info.nlink != 1 {
		return invalidInput("database file has more than one link")
	}
	return nil
}

// privateMode tightens a writable ledger's file to 0600 and requires a
// read-only ledger's file to be private already.
func (g *Guard) privateMode(f *os.File, info FileInfo) error {
	if !PosixModes || info.perm == 0o600 {
		return nil
	}
	if g.readOnly {
		if info.perm&0o077 != 0 {
			return invalidInput("database file mode is not private")
		}
		return nil
	}
	if err := f.Chmod(0o600); err != nil {
		return internal("tighten database mode", err)
	}
	return nil
}

// check re-verifies the storage before an operation: the path still names
// the remembered file, which is still a regular single-link file, and the
// sidecars are safe. It costs one lstat per file.
func (g *Guard) check() error {
	info, err := Lstat(g.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return stateConflict("database file disappeared")
		}
		return internal("stat database", err)
	}
	if err := checkDBShape(info); err != nil {
		return err
	}
	if info.ident != g.ident {
		return stateConflict("database file was replaced")
	}
	if PosixModes && info.perm != 0o600 {
		if g.readOnly {
			if info.perm&0o077 != 0 {
				return invalidInput("database file mode is not private")
			}
		} else if err := g.held.f.Chmod(0o600); err != nil {
			return internal("tighten database mode", err)
		}
	}
	return g.checkSidecars()
}

// checkSidecars refuses linked or irregular sidecars and tightens (or, read
// only, requires) private modes. A sidecar with zero links is SQLite
// unlinking it right now and is skipped.
func (g *Guard) checkSidecars() error {
	for _, suffix := range SidecarSuffixes {
		p := g.path + suffix
		info, err := Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return internal("stat sidecar", err)
		}
		if info.isLink || !info.isReg {
			return invalidInput("sidecar is not a regular file")
		}
		if info.nlink == 0 {
			continue
		}
		if info.nlink != 1 {
			return invalidInput("sidecar has more than one link")
		}
		if PosixModes && info.perm != 0o600 {
			if g.readOnly {
				if info.perm&0o077 != 0 {
					return invalidInput("sidecar mode is not private")
				}
				continue
			}
			// chmod by path: opening a sidecar would drop SQLite's locks.
			// The lstat above refused links; the window until chmod is
			// only open to same-user processes, which are trusted.
			if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return internal("tighten sidecar mode", err)
			}
		}
	}
	return nil
}

// release drops the guard's reference to the shared descriptor. Call it
// only after the ledger's SQLite connection is closed.
func (g *Guard) release() {
	if g.held != nil {
		g.held.release()
		g.held = nil
	}
}

// DatabaseMissing is the ledger's DatabaseMissing: Open's path text and
// platform checks, then one lstat.
func DatabaseMissing(path string, opts Options) (bool, error) {
	clean, err := CheckPathText(path)
	if err != nil {
		return false, err
	}
	if err := platformPreflight(opts); err != nil {
		return false, err
	}
	_, err = os.Lstat(clean)
	return errors.Is(err, fs.ErrNotExist), nil
}

// RemoveFile removes a file this package made and failed to finish.
func RemoveFile(path string) { os.Remove(path) }
