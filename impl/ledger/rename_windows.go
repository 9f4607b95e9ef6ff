package ledger

import (
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// renameNoReplace moves from to to unless to exists (an error that
// errors.Is fs.ErrExist): without MOVEFILE_REPLACE_EXISTING the move never
// replaces, and MOVEFILE_WRITE_THROUGH returns only once the move is on
// disk (Windows cannot sync a directory, so this is the rename's sync).
func renameNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	if err := windows.MoveFileEx(f, t, windows.MOVEFILE_WRITE_THROUGH); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// Test seams: how long a refused move is retried, and a call made after
// each refusal.
var (
	renameHeldWait           = 5 * time.Second
	renameHeldRefused func() = func() {}
)
