//go:build unix

package durable

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Lock is a held advisory lock; Unlock releases it.
type Lock struct{ f *os.File }

// Acquire blocks until it holds an exclusive flock on path. The lock file is
// created if missing with mode 0600, never truncated and never reached
// through a symbolic link in its last component (divergence D2).
func Acquire(path string) (*Lock, error) {
	fd, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("flock: %w", err)
	}
	return &Lock{f: os.NewFile(uintptr(fd), path)}, nil
}

// openLock opens (creating) the lock file as Acquire does, holding no lock yet.
func openLock(path string) (*Lock, error) {
	fd, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return &Lock{f: os.NewFile(uintptr(fd), path)}, nil
}

// tryLock takes the exclusive flock without waiting; false means another
// descriptor holds it.
func (l *Lock) tryLock() (bool, error) {
	conn, err := l.f.SyscallConn()
	if err != nil {
		return false, fmt.Errorf("flock: %w", err)
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return false, fmt.Errorf("flock: %w", err)
	}
	if ferr == unix.EWOULDBLOCK {
		return false, nil
	}
	if ferr != nil {
		return false, fmt.Errorf("flock: %w", ferr)
	}
	return true, nil
}

// close drops the descriptor (and with it any lock it holds).
func (l *Lock) close() { l.f.Close() }

// openLockFile opens the lock file read-write without following a link in
// its last component. A file it creates is set to 0600 whatever the umask
// (as the temporary file is): a umask without the owner's write bit would
// otherwise leave a lock file that no later call can open read-write.
// An existing file keeps its mode.
func openLockFile(path string) (int, error) {
	const flags = unix.O_RDWR | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for {
		fd, err := unix.Open(path, flags|unix.O_CREAT|unix.O_EXCL, 0o600)
		if err == nil {
			if err = unix.Fchmod(fd, 0o600); err != nil {
				unix.Close(fd)
				return -1, err
			}
			return fd, nil
		}
		if err == unix.EINTR {
			continue
		}
		if err != unix.EEXIST {
			return -1, err
		}
		// It exists (or a link sits there, which O_NOFOLLOW refuses).
		fd, err = unix.Open(path, flags, 0)
		if err == unix.ENOENT || err == unix.EINTR {
			continue // removed in between: create it after all
		}
		return fd, err
	}
}

// openNonblocking opens p read-only with O_NONBLOCK and O_NOCTTY, so that
// neither a FIFO nor a device can block the open.
func openNonblocking(p string) (*os.File, error) {
	for {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: p, Err: err}
		}
		return os.NewFile(uintptr(fd), p), nil
	}
}

// Unlock releases the lock by closing the descriptor.
func (l *Lock) Unlock() error { return l.f.Close() }

// OwnedByEffectiveUser reports whether fi's owner is this process's
// effective user.
func OwnedByEffectiveUser(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return int(st.Uid) == os.Geteuid()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// refusedWhileOpen is false: a rename replaces an open file here.
func refusedWhileOpen(error) bool { return false }
