package storageguard

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// RenameNoReplace moves from to to unless to exists (an error that
// errors.Is fs.ErrExist): without MOVEFILE_REPLACE_EXISTING the move never
// replaces, and MOVEFILE_WRITE_THROUGH returns only once the move is on
// disk (Windows cannot sync a directory, so this is the rename's sync).
func RenameNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	delay := time.Millisecond
	deadline := time.Now().Add(renameHeldWait)
	for {
		err := windows.MoveFileEx(f, t, windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		if !heldByAnother(err) || time.Now().After(deadline) {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		renameHeldRefused()
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// heldByAnother is a refusal because some other handle holds the file
// without delete sharing: a virus scanner or an indexer opening the new
// copy, which lets go within moments. Like the sweep's rename, the move
// waits for it rather than failing a backup that is whole.
func heldByAnother(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}

// Test seams: how long a refused move is retried, and a call made after
// each refusal.
var (
	renameHeldWait           = 5 * time.Second
	renameHeldRefused func() = func() {}
)
