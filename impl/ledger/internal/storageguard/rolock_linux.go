//go:build linux

package storageguard

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/stateguard/stateguard/impl/ledger/internal/ledgererr"
)

// HaveReadLocks: Linux has open-file-description (OFD) locks. Unlike
// classic POSIX record locks they belong to the descriptor, not to the
// process, so taking and dropping them never touches the locks SQLite
// holds in this process, and they conflict with SQLite's locks even when
// SQLite runs in this same process.
const HaveReadLocks = true

// readLock takes a shared OFD lock on [start, start+n) of f without
// waiting; a conflicting lock is ledgererr.ErrBusy.
func readLock(f *os.File, start, n int64) error {
	return ofdLock(f, unix.F_RDLCK, start, n)
}

// readUnlock drops the OFD lock readLock took.
func readUnlock(f *os.File, start, n int64) {
	ofdLock(f, unix.F_UNLCK, start, n)
}

func ofdLock(f *os.File, typ int16, start, n int64) error {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: start, Len: n}
	raw, err := f.SyscallConn()
	if err != nil {
		return internal("lock", err)
	}
	var lerr error
	if err := raw.Control(func(fd uintptr) {
		for {
			lerr = unix.FcntlFlock(fd, unix.F_OFD_SETLK, &lk)
			if lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return internal("lock", err)
	}
	if errors.Is(lerr, unix.EAGAIN) || errors.Is(lerr, unix.EACCES) {
		return ledgererr.ErrBusy
	}
	if lerr != nil {
		return internal("lock", lerr)
	}
	return nil
}
