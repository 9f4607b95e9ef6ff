//go:build !linux && !darwin && !windows

package ledger

// renameNoReplace moves from to to unless to exists (an error that
// errors.Is fs.ErrExist).
func renameNoReplace(from, to string) error { return linkThenRemove(from, to) }
