package ledger

import "github.com/stateguard/stateguard/impl/ledger/internal/storageguard"

// CheckPath applies Open's rules for the text of a database path, without
// looking at the disk: not empty, no NUL, not ":memory:", not a UNC path,
// and naming a file (not "", ".", ".." or, on Windows, a drive's "C:").
// A refusal is ErrInvalidInput. A command line can judge a path with its
// other arguments this way, before anything is opened or created.
func CheckPath(path string) error {
	_, err := storageguard.CheckPathText(path)
	return err
}

// DatabaseMissing reports, without creating, opening or changing anything,
// whether no database file exists at path. It applies Open's path text and
// platform checks first (and returns their error), then looks at the path
// with one lstat. A caller that addresses an existing task can answer
// ErrTaskNotFound for a missing ledger instead of letting Open create one
// (the command line does: divergence L1). false says only that something
// is there: whether it is a ledger is Open's to judge.
func DatabaseMissing(path string, opts Options) (bool, error) {
	return storageguard.DatabaseMissing(path, opts.storage())
}
