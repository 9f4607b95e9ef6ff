//go:build windows

package durable

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// Lock is a held advisory lock; Unlock releases it.
type Lock struct{ h windows.Handle }

// Acquire blocks until it holds an exclusive LockFileEx lock on path. The
// file is created if missing, never truncated, and opened without following
// a reparse point (the Windows counterpart of O_NOFOLLOW).
func Acquire(path string) (*Lock, error) {
	l, err := openLock(path)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(l.h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		l.close()
		return nil, fmt.Errorf("LockFileEx: %w", err)
	}
	return l, nil
}

// openLock opens (creating) the lock file as Acquire does, holding no lock yet.
func openLock(path string) (*Lock, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_ALWAYS, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return &Lock{h: h}, nil
}

// tryLock takes the exclusive lock without waiting; false means another
// handle holds it.
func (l *Lock) tryLock() (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(l.h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err == windows.ERROR_LOCK_VIOLATION {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("LockFileEx: %w", err)
	}
	return true, nil
}

// close drops the handle (and with it any lock it holds).
func (l *Lock) close() { windows.CloseHandle(l.h) }

// Unlock releases the lock and closes the handle.
func (l *Lock) Unlock() error {
	ol := new(windows.Overlapped)
	windows.UnlockFileEx(l.h, 0, 1, 0, ol)
	return windows.CloseHandle(l.h)
}

// OwnedByEffectiveUser is always true on Windows: ownership is left to the
// directory's ACLs (documented best effort).
func OwnedByEffectiveUser(fi os.FileInfo) bool { return true }

// syncDir is a no-op: Windows cannot sync a directory handle.
func syncDir(dir string) error { return nil }

// refusedWhileOpen reports a rename refused because another handle holds
// the target open.
func refusedWhileOpen(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

// openNonblocking opens p for reading, sharing read, write and delete
// access: read and cursor-get take no lock, so a writer must be able to
// rename its new file over p while they hold it (os.Open shares no delete
// access, and the rename would be refused). Windows has no FIFO at a file
// path, and OpenRegular refuses anything that is not a regular file.
func openNonblocking(p string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		if err == windows.ERROR_FILE_NOT_FOUND || err == windows.ERROR_PATH_NOT_FOUND {
			err = os.ErrNotExist
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(h), p), nil
}
