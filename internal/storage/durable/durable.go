// Package durable holds the file-system edge of the sweep engine: the
// advisory lock on "<state>.lock", the crash-safe replacement of the state
// file, and the ownership check that keeps a co-tenant's planted file out.
//
// Platform notes: on Unix the lock is flock(2) and ownership compares the
// file's uid with the effective uid. On Windows the lock is LockFileEx on the
// whole lock file (the lock file is opened without following reparse
// points), ownership is not checked (best effort: NTFS ACLs decide who can
// write there), and the directory is not synced (Windows has no such call).
// Other platforms refuse to lock with ErrUnsupported.
package durable

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ErrUnsupported is returned where the platform offers no advisory lock.
var ErrUnsupported = errors.New("durable: file locking is not supported on this platform")

// ErrNotRegular is returned by OpenRegular for a directory, FIFO, socket or
// device.
var ErrNotRegular = errors.New("durable: not a regular file")

// OpenRegular opens p for reading and returns it with its status when it is
// a regular file, else ErrNotRegular. A symbolic link is followed (the
// reference engine reads a linked state file too). On Unix the open never
// blocks (O_NONBLOCK: a FIFO without a writer would hang while the caller
// holds the lock) and never makes a terminal the controlling one; the
// status comes from the open descriptor, so the file checked is the file
// read, with no window for a swap between the two.
func OpenRegular(p string) (*os.File, os.FileInfo, error) {
	f, err := openNonblocking(p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, ErrNotRegular
	}
	return f, fi, nil
}

// DirMode is the mode used for missing parent directories (before umask).
const DirMode = 0o755

// LockPath is the lock file that guards state path p.
func LockPath(p string) string { return p + ".lock" }

// maxLinkHops bounds a chain of symbolic links, as the kernel's ELOOP does.
const maxLinkHops = 40

// ErrLinkLoop is a chain of symbolic links at a state path that does not
// end within maxLinkHops links.
var ErrLinkLoop = errors.New("too many levels of symbolic links")

// ResolveLink follows the symbolic links that the final component of p
// names, one after another, to the path of the file they lead to (which
// need not exist yet). A write through the result replaces that file and
// leaves the links in place, and its lock (LockPath of the result) is the
// one every path to the file shares. A path that is no link is returned
// as it is; directories above the final name are left to the kernel.
func ResolveLink(p string) (string, error) {
	for range maxLinkHops {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			// Absent or not a link: the write creates or replaces p
			// itself (an error other than absence is the load's to say).
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return "", ErrLinkLoop
}

// EnsureParent creates the missing parent directories of p, outermost
// first, and syncs each one's parent right after making it: a new
// directory entry survives a power cut only once the directory holding it
// is synced, and MkdirAll syncs nothing, so a state file written below a
// fresh directory could otherwise vanish with it (D3). A directory found
// made meanwhile by another writer is synced into its parent too, since
// that writer may not have synced it yet.
func EnsureParent(p string) error {
	var missing []string // innermost first
	for d := filepath.Dir(p); ; {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("create parent directory: %w", &os.PathError{Op: "mkdir", Path: d, Err: errNotDir})
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("create parent directory: %w", err)
		}
		missing = append(missing, d)
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, DirMode); err != nil {
			if fi, serr := os.Stat(d); serr != nil || !fi.IsDir() {
				return fmt.Errorf("create parent directory: %w", err)
			}
		}
		if err := ops.SyncDir(filepath.Dir(d)); err != nil {
			return fmt.Errorf("sync parent directory: %w", err)
		}
	}
	return nil
}

var errNotDir = errors.New("not a directory")

// WriteFileFunc replaces p with the bytes write produces (through a
// buffer, so a large file is never held in memory whole) so that a reader
// sees either the old or the new file, never a torn one: a fresh temporary
// file in the same directory (exclusive create, mode 0600) is written,
// synced, renamed over p, and the directory is synced so the rename
// survives a power cut (divergence D3).
func WriteFileFunc(p string, write func(io.Writer) error) (err error) {
	return WriteFileModeFunc(p, 0o600, write)
}

// WriteFileModeFunc is WriteFileFunc for a file of mode perm (applied to
// the temporary file before anything is written to it, whatever the
// umask), for a file other users must read.
func WriteFileModeFunc(p string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(p)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	name := tmp.Name()
	renamed := false
	// Whatever stops the write before the rename (an error or a panic in
	// write), the temporary file goes.
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(name)
		}
	}()
	// CreateTemp already uses 0600; Chmod makes it independent of that detail.
	if err = tmp.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("chmod temporary file: %w", err)
	}
	// A small buffer: it gathers small writes, while a writer that already
	// writes large chunks has them passed straight through, uncopied.
	bw := bufio.NewWriter(tmp)
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("write temporary file: %w", err)
	}
	if err = ops.SyncFile(tmp); err != nil {
		return fmt.Errorf("sync temporary file: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close temporary file: %w", err)
	}
	if err = renameOver(name, p); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	renamed = true
	if err = ops.SyncDir(dir); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

// renameWait bounds how long a write waits for a reader that holds the file.
const renameWait = 5 * time.Second

// renameOver renames the new file over p. Where a rename over a file that
// another process holds open is refused (Windows without delete sharing by
// every holder; Wine whatever the sharing), a lock-free reader (read,
// cursor-get, or another program) only delays the write, since a reader
// holds the file for one read: the rename is retried until renameWait has
// passed. Elsewhere the first answer stands.
func renameOver(oldpath, newpath string) error {
	delay := time.Millisecond
	deadline := time.Now().Add(renameWait)
	for {
		err := ops.Rename(oldpath, newpath)
		if err == nil || !refusedWhileOpen(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// Ops are the durability steps WriteFileFunc takes after writing the
// temporary file. They are a seam for tests only: a test records their
// order (the guarantee of D3 is the order write, sync file, rename, sync
// directory, which no single-process test could otherwise see) or makes
// one fail as a full or broken disk would.
type Ops struct {
	SyncFile func(f *os.File) error
	Rename   func(oldpath, newpath string) error
	SyncDir  func(dir string) error
}

// DefaultOps are the real calls.
func DefaultOps() Ops {
	return Ops{SyncFile: (*os.File).Sync, Rename: os.Rename, SyncDir: syncDir}
}

var ops = DefaultOps()

// SetOps replaces the durability steps and returns a function restoring the
// previous ones. Tests only; not safe while a write is running.
func SetOps(o Ops) (restore func()) {
	prev := ops
	ops = o
	return func() { ops = prev }
}
