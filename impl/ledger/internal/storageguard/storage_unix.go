//go:build linux || darwin

package storageguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// PosixModes: permission bits, ownership and sticky ancestors are checked.
const PosixModes = true

// CanCreateDirs: missing parent directories are created 0700.
const CanCreateDirs = true

// permissionModel is what StorageInfo reports on this platform.
const permissionModel = "posix_mode"

// platformPreflight has nothing to check on POSIX.
func platformPreflight(Options) error { return nil }

func infoFromStat(st *syscall.Stat_t) FileInfo {
	mode := uint32(st.Mode)
	return FileInfo{
		ident:   fileIdent{dev: uint64(st.Dev), ino: uint64(st.Ino)},
		nlink:   uint64(st.Nlink),
		perm:    fs.FileMode(mode & 0o777),
		sticky:  mode&syscall.S_ISVTX != 0,
		uid:     int(st.Uid),
		isLink:  mode&syscall.S_IFMT == syscall.S_IFLNK,
		isDir:   mode&syscall.S_IFMT == syscall.S_IFDIR,
		isReg:   mode&syscall.S_IFMT == syscall.S_IFREG,
		size:    int64(st.Size),
		modTime: statMtime(st),
		chTime:  statCtime(st),
	}
}

// Lstat reads path's metadata without following a final symlink.
func Lstat(path string) (FileInfo, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return FileInfo{}, &fs.PathError{Op: "Lstat", Path: path, Err: err}
		}
		return infoFromStat(&st), nil
	}
}

// fstat reads an open file's metadata.
func fstat(f *os.File) (FileInfo, error) {
	var st syscall.Stat_t
	raw, err := f.SyscallConn()
	if err != nil {
		return FileInfo{}, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) }); err != nil {
		return FileInfo{}, err
	}
	if serr != nil {
		return FileInfo{}, serr
	}
	return infoFromStat(&st), nil
}

// OpenNoFollow opens an existing database file read-only without following
// a symlink in the final component.
func OpenNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}

// CreatePrivate creates a new database file 0600 without following links,
// and tightens it to 0600 whatever the umask did. A file that exists by
// now is errFileAppeared: another opener made it first.
func CreatePrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, ErrFileAppeared
		}
		return nil, internal("create database", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, internal("tighten database mode", err)
	}
	return f, nil
}

// checkAncestors walks the resolved directory from the root down: every
// component must be a real directory, and every group- or world-writable
// one must be sticky. The final directory gets its own stricter check;
// dir is that final directory only when final is true (nothing is missing
// below it), else it is an ancestor of the directories the open creates.
func checkAncestors(dir string, final bool) error {
	var chain []string
	for p := dir; ; p = filepath.Dir(p) {
		chain = append(chain, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		info, err := Lstat(chain[i])
		if err != nil {
			return invalidInput("database directory cannot be inspected")
		}
		if info.isLink || !info.isDir {
			return invalidInput("database directory path has a non-directory component")
		}
		if (i > 0 || !final) && info.perm&0o022 != 0 && !info.sticky {
			return invalidInput("a writable ancestor directory is not sticky")
		}
	}
	return nil
}

// makePrivateDir creates one missing directory 0700 (whatever the umask)
// and syncs its parent, so that its entry survives a power cut before
// anything is made inside it (L6): SQLite syncs only the directory that
// holds its own files. A directory another process made meanwhile is
// synced too, since that process may not have synced it yet.
func makePrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return invalidInput("database directory cannot be created")
	}
	if err := syncParentDir(filepath.Dir(dir)); err != nil {
		return internal("sync parent directory", err)
	}
	info, err := Lstat(dir)
	if err != nil || info.isLink || !info.isDir {
		return invalidInput("database directory path has a non-directory component")
	}
	if info.perm != 0o700 && info.uid == os.Geteuid() {
		if err := os.Chmod(dir, 0o700); err != nil {
			return internal("tighten directory mode", err)
		}
	}
	return nil
}

// checkFinalDir requires the database's own directory to be a real
// directory owned by the effective user and not group- or world-writable.
// A read-only open by root may read a directory another user owns (a
// monitoring job reading a worker's ledger): it writes, creates and
// re-permissions nothing, follows no link and reads the file through the
// descriptor it checked, so the owner can show root no more than a file
// the owner could have written anyway (THREAT_MODEL.md). given is the
// directory as the path spells it, before links were resolved: root reads
// another user's directory only when no link led there, since the owner
// of a link on the way could point root's read at a third user's ledger.
func checkFinalDir(dir, given string, readOnly bool) error {
	info, err := Lstat(dir)
	if err != nil {
		return invalidInput("database directory cannot be inspected")
	}
	if info.isLink || !info.isDir {
		return invalidInput("database directory is not a directory")
	}
	if euid := Hooks.EffectiveUID(); info.uid != euid {
		if !readOnly || euid != 0 {
			return invalidInput("database directory is not owned by the effective user")
		}
		if given != dir {
			return invalidInput("another user's database directory is reached through a link")
		}
	}
	if info.perm&0o022 != 0 {
		return invalidInput("database directory is group- or world-writable")
	}
	return nil
}

// syncParentDir syncs a directory so that the entries made in it survive
// a power cut (Hooks.SyncParentDir in its place when a test set it).
func syncParentDir(dir string) error {
	if Hooks.SyncParentDir != nil {
		return Hooks.SyncParentDir(dir)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// SyncEntryDir syncs the directory holding a file this package created,
// so that the file's entry survives a power cut.
func SyncEntryDir(dir string) error { return syncParentDir(dir) }
