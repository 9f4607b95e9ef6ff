package benchseed

import (
	"io"
	"os"
	"path/filepath"
)

// CopyLedger streams the seeded ledger file into a new private directory
// under work and flushes it, so that a measured command's own fsync does
// not pay for the copy's dirty pages. It returns the copy's path; removing
// its directory removes the copy.
func CopyLedger(work, seeded string) (string, error) {
	dir, err := os.MkdirTemp(work, "run-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	db := filepath.Join(dir, "tasks.sqlite")
	src, err := os.Open(seeded)
	if err != nil {
		return "", err
	}
	defer src.Close()
	f, err := os.OpenFile(db, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	return db, f.Close()
}
