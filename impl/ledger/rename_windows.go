package ledger

import (
	"os"
	"syscall"
)

// renameNoReplace moves from to to unless to exists (an error that
// errors.Is fs.ErrExist): MoveFile, unlike os.Rename, never replaces.
func renameNoReplace(from, to string) error {
	f, err := syscall.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := syscall.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	if err := syscall.MoveFile(f, t); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
