package storageguard

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// RenameNoReplace moves from to to unless to exists (an error that
// errors.Is fs.ErrExist), in one step of the file system. A file system
// without RENAME_NOREPLACE gets a hard link and an unlink, which refuse an
// existing target just the same.
func RenameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return linkThenRemove(from, to)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
