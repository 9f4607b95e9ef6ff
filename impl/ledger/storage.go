package ledger

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// maxSnapshotBytes bounds the private in-memory copy of a read-only ledger.
const maxSnapshotBytes = 64 << 20

// sidecarSuffixes are the files SQLite keeps beside the database.
var sidecarSuffixes = []string{"-journal", "-wal", "-shm"}

// fileIdent is a file's identity: device and inode on POSIX, volume serial
// and file index on Windows.
type fileIdent struct{ dev, ino uint64 }

// fileInfo is what the storage guard needs to know about one path, read
// without following a final symlink.
type fileInfo struct {
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

// checkPathText applies the textual path rules (contract §8): non-empty, no
// NUL, not ":memory:", not a UNC path. It returns the path with trailing
// separators removed, so "PATH/" acts like "PATH".
func checkPathText(path string) (string, error) {
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
func resolveParent(path string) (dir string, missing []string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, internal("resolve path", err)
	}
	dir = filepath.Dir(abs)
	for {
		resolved, rerr := filepath.EvalSymlinks(dir)
		if rerr == nil {
			for i, j := 0, len(missing)-1; i < j; i, j = i+1, j-1 {
				missing[i], missing[j] = missing[j], missing[i]
			}
			return resolved, missing, nil
		}
		if !errors.Is(rerr, fs.ErrNotExist) {
			return "", nil, invalidInput("database directory cannot be resolved")
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", nil, invalidInput("database directory cannot be resolved")
		}
		missing = append(missing, filepath.Base(dir))
		dir = up
	}
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

// readAllAt reads the whole file through f without moving a shared offset
// and without closing anything.
func readAllAt(f *os.File, size int64) ([]byte, error) {
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return nil, err
	}
	return buf, nil
}

// hashAt returns the SHA-256 of the first size bytes of f, read through a
// small buffer without moving a shared offset; a shorter file is an error.
// The buffer is wiped afterwards: it held database content.
func hashAt(f *os.File, size int64) ([]byte, error) {
	h := sha256.New()
	buf := make([]byte, 256<<10)
	defer wipe(buf)
	for off := int64(0); off < size; {
		chunk := buf
		if rest := size - off; rest < int64(len(chunk)) {
			chunk = chunk[:rest]
		}
		n, err := f.ReadAt(chunk, off)
		if err != nil && !(errors.Is(err, io.EOF) && n == len(chunk)) {
			return nil, err
		}
		h.Write(chunk)
		off += int64(n)
	}
	return h.Sum(nil), nil
}
