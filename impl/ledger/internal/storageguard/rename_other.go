//go:build !linux && !darwin && !windows

package storageguard

// RenameNoReplace moves from to to unless to exists (an error that
// errors.Is fs.ErrExist).
func RenameNoReplace(from, to string) error { return linkThenRemove(from, to) }
