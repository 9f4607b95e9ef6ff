package storageguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// errInUse is an open that another handle's sharing refused (Windows'
// sharing violation; never on POSIX): SQLite deleting a sidecar holds it
// with delete access for that moment. On a sidecar it is a change in
// progress, retried as one (spec/task-state-guard.md 12.4).
var errInUse = errors.New("file held by another handle")

// SidecarSuffixes are the files SQLite keeps beside the database.
var SidecarSuffixes = []string{"-journal", "-wal", "-shm"}

// fileIdent is a file's identity: device and inode on POSIX, volume serial
// and file index on Windows.
type fileIdent struct{ dev, ino uint64 }

// FileInfo is what the storage guard needs to know about one path, read
// without following a final symlink.
type FileInfo struct {
	ident   fileIdent
	nlink   uint64
	perm    fs.FileMode // permission bits (POSIX)
	sticky  bool
	uid     int // owner (POSIX); -1 when unknown
	isLink  bool
	isDir   bool
	isReg   bool
	size    int64
	modTime int64 // nanoseconds
	chTime  int64 // nanoseconds; 0 when unknown
}

// CheckPathText applies the textual path rules (spec/task-state-guard.md §11.1): non-empty, no
// NUL, not ":memory:", not a UNC path. It returns the path with trailing
// separators removed, so "PATH/" acts like "PATH".
func CheckPathText(path string) (string, error) {
	if path == "" || strings.ContainsRune(path, 0) || path == ":memory:" {
		return "", invalidInput("database path is not allowed")
	}
	if strings.HasPrefix(path, `\\`) || (os.PathSeparator == '\\' && strings.HasPrefix(path, "//")) {
		return "", invalidInput("UNC paths are not supported")
	}
	trimmed := strings.TrimRight(path, string(os.PathSeparator)+"/")
	if trimmed == "" || (runtime.GOOS == "windows" && strings.HasSuffix(trimmed, ":")) {
		// On Windows "C:" names a drive's current directory, not a file;
		// elsewhere a trailing colon is an ordinary file name character.
		return "", invalidInput("database path names no file")
	}
	base := filepath.Base(trimmed)
	if base == "." || base == ".." {
		return "", invalidInput("database path names no file")
	}
	return trimmed, nil
}

// resolveParent canonicalises the parent directory of path: the deepest
// existing ancestor is resolved through symlinks and the missing remainder
// is appended. It returns the resolved parent and the names still missing
// below it, outermost first.
//
// The path is not cleaned first: filepath.Clean drops "link/.." lexically,
// while the kernel, realpath and the reference read ".." after a symlink as
// the parent of its target; EvalSymlinks reads it that way too. Names below
// the deepest existing directory do not exist, so there ".." is lexical.
func resolveParent(path string) (dir string, missing []string, err error) {
	abs := path
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = fromWorkingDir(path); err != nil {
			return "", nil, err
		}
	}
	dir, _ = splitLast(abs)
	var pending []string // names that do not exist, innermost first
	for {
		resolved, rerr := filepath.EvalSymlinks(dir)
		if rerr == nil {
			for i := len(pending) - 1; i >= 0; i-- {
				switch name := pending[i]; name {
				case "", ".":
				case "..":
					if len(missing) > 0 {
						missing = missing[:len(missing)-1]
					} else {
						resolved = filepath.Dir(resolved)
					}
				default:
					missing = append(missing, name)
				}
			}
			return resolved, missing, nil
		}
		if !errors.Is(rerr, fs.ErrNotExist) {
			return "", nil, invalidInput("database directory cannot be resolved")
		}
		up, name := splitLast(dir)
		if up == dir {
			return "", nil, invalidInput("database directory cannot be resolved")
		}
		pending = append(pending, name)
		dir = up
	}
}

// fromWorkingDir makes a relative path absolute as the platform reads it,
// without cleaning it. On Windows a path may also be rooted without a
// drive ("\ledgers\tasks.sqlite": that path on the current directory's
// drive) or name a drive without being rooted ("D:tasks.sqlite": against
// that drive's current directory); neither is relative to the current
// directory itself. A rooted path while the current directory is on a UNC
// share is a UNC path, refused as one (11.1).
func fromWorkingDir(path string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", internal("resolve path", err)
	}
	sep := string(os.PathSeparator)
	if runtime.GOOS != "windows" {
		return wd + sep + path, nil
	}
	switch vol := filepath.VolumeName(path); {
	case vol != "":
		// The drive's current directory is the process's own for its
		// drive, else what Windows remembers for that drive (its root by
		// default); filepath.Abs asks Windows.
		dir, err := filepath.Abs(vol)
		if err != nil {
			return "", internal("resolve path", err)
		}
		return strings.TrimRight(dir, sep) + sep + path[len(vol):], nil
	case os.IsPathSeparator(path[0]):
		vol := filepath.VolumeName(wd)
		if strings.HasPrefix(vol, `\\`) {
			return "", invalidInput("UNC paths are not supported")
		}
		return vol + path, nil
	}
	return wd + sep + path, nil
}

// splitLast splits p at its last separator without cleaning either side;
// the root (and a volume's root) keeps its separator.
func splitLast(p string) (parent, name string) {
	i := len(p) - 1
	for i >= 0 && !os.IsPathSeparator(p[i]) {
		i--
	}
	if i < 0 {
		return p, ""
	}
	parent = p[:i]
	if len(parent) <= len(filepath.VolumeName(p)) {
		parent = p[:i+1]
	}
	return parent, p[i+1:]
}

// heldFile is one open descriptor of a database file, shared by every
// Ledger of this process that uses the same file. Closing any descriptor of
// a file drops the process's POSIX locks on it, SQLite's included, so the
// descriptor is closed only when the last user releases it, after that
// user's SQLite connection is closed.
type heldFile struct {
	f     *os.File
	ident fileIdent
	refs  int

	// Read-only views of this process share f, and so share the owner of
	// its OFD locks: the shared lock on the database is taken by the first
	// and dropped by the last of them.
	dbLocks int
	// shms are the -shm files read-only views locked, by identity. They are
	// closed only with f: closing a descriptor of the -shm would drop the
	// POSIX locks an SQLite connection of this process holds on it.
	shms map[fileIdent]*heldShm
}

// heldShm is one -shm file a read-only view opened to lock.
type heldShm struct {
	f     *os.File
	locks int
}

var (
	heldMu    sync.Mutex
	heldFiles = map[fileIdent]*heldFile{}
)

// holdFile registers f (already open, identity ident) or, when the file is
// already held, closes nothing and returns the shared entry. f is consumed.
func holdFile(f *os.File, ident fileIdent) *heldFile {
	heldMu.Lock()
	defer heldMu.Unlock()
	if h, ok := heldFiles[ident]; ok {
		h.refs++
		// f is a second descriptor of a held file: keep it with the entry
		// rather than closing it now, which would drop SQLite's locks.
		extra := &heldFile{f: f, ident: ident, refs: 1}
		leaked = append(leaked, extra)
		return h
	}
	h := &heldFile{f: f, ident: ident, refs: 1}
	heldFiles[ident] = h
	return h
}

// leaked keeps duplicate descriptors alive until the shared entry closes.
var leaked []*heldFile

// lookupHeld returns the held entry for ident, adding a reference, or nil.
func lookupHeld(ident fileIdent) *heldFile {
	heldMu.Lock()
	defer heldMu.Unlock()
	if h, ok := heldFiles[ident]; ok {
		h.refs++
		return h
	}
	return nil
}

// release drops one reference; the last one closes the descriptor (and any
// duplicates kept for the same file).
func (h *heldFile) release() {
	heldMu.Lock()
	defer heldMu.Unlock()
	h.refs--
	if h.refs > 0 {
		return
	}
	delete(heldFiles, h.ident)
	h.f.Close()
	for _, s := range h.shms {
		s.f.Close()
	}
	kept := leaked[:0]
	for _, x := range leaked {
		if x.ident == h.ident {
			x.f.Close()
			continue
		}
		kept = append(kept, x)
	}
	leaked = kept
}

// SQLite's lock layout on POSIX (os_unix.c, wal.c): the database's SHARED
// range, and the -shm byte a reader holds while it reads the database file
// alone (WAL_READ_LOCK(0)). A checkpoint must lock that byte exclusively
// before it copies pages into the database, and a closing connection must
// lock the SHARED range exclusively before it checkpoints and deletes the
// -wal.
const (
	sqliteSharedFirst = 0x40000000 + 2
	sqliteSharedSize  = 510
	SQLiteShmReadLock = 120 + 3
)

// lockDatabaseShared takes (or shares) the read lock on the database's
// SHARED range for a read-only view.
func (h *heldFile) lockDatabaseShared() error {
	heldMu.Lock()
	defer heldMu.Unlock()
	if h.dbLocks == 0 {
		if err := readLock(h.f, sqliteSharedFirst, sqliteSharedSize); err != nil {
			return err
		}
	}
	h.dbLocks++
	return nil
}

func (h *heldFile) unlockDatabaseShared() {
	heldMu.Lock()
	defer heldMu.Unlock()
	h.dbLocks--
	if h.dbLocks == 0 {
		readUnlock(h.f, sqliteSharedFirst, sqliteSharedSize)
	}
}

// lockShm opens the -shm at path (without following links or creating
// it), requires it to be the file lstat saw (ident), and read-locks the
// byte that keeps checkpoints out of the database file. It reports false,
// nil when the file is gone.
func (h *heldFile) lockShm(path string, ident fileIdent) (bool, error) {
	heldMu.Lock()
	defer heldMu.Unlock()
	h.pruneShms()
	s := h.shms[ident]
	if s == nil {
		f, err := OpenNoFollow(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return false, invalidInput("sidecar cannot be opened safely")
		}
		st, err := fstat(f)
		if err != nil || st.ident != ident {
			f.Close()
			return false, ErrSourceChanged
		}
		s = &heldShm{f: f}
		if h.shms == nil {
			h.shms = map[fileIdent]*heldShm{}
		}
		h.shms[ident] = s
	}
	if s.locks == 0 {
		if err := readLock(s.f, SQLiteShmReadLock, 1); err != nil {
			return false, err
		}
	}
	s.locks++
	return true, nil
}

// unlockShm drops the lock lockShm took. A -shm that has been unlinked
// (its last writer closed) is held by no SQLite connection any more, so
// its descriptor is closed at the next lock or unlock: a long-lived
// read-only ledger beside writers that come and go keeps one descriptor,
// not one per writer session.
func (h *heldFile) unlockShm(ident fileIdent) {
	heldMu.Lock()
	defer heldMu.Unlock()
	s := h.shms[ident]
	s.locks--
	if s.locks > 0 {
		return
	}
	readUnlock(s.f, SQLiteShmReadLock, 1)
	h.pruneShms()
}

// pruneShms closes the unlocked -shm descriptors whose file has been
// unlinked. The caller holds heldMu.
func (h *heldFile) pruneShms() {
	for ident, s := range h.shms {
		if s.locks > 0 {
			continue
		}
		if st, err := fstat(s.f); err == nil && st.nlink == 0 {
			s.f.Close()
			delete(h.shms, ident)
		}
	}
}

// givenDir is the directory of path as its text names it, made absolute
// and cleaned but with no link resolved ("" when it cannot be made
// absolute): compared with the resolved directory, it tells whether a link
// led there.
func givenDir(path string) string {
	abs := path
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = fromWorkingDir(path); err != nil {
			return ""
		}
	}
	dir, _ := splitLast(abs)
	return filepath.Clean(dir)
}
