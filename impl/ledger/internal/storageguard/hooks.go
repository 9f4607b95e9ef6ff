package storageguard

import (
	"os"
	"time"
)

// Options are the ledger's options the storage guard reads.
type Options struct {
	// ReadOnly creates, re-permissions and writes nothing.
	ReadOnly bool
	// MustExist refuses a database (or directory) that does not exist.
	MustExist bool
	// AllowExternalACL is the Windows acknowledgement.
	AllowExternalACL bool
	// Fresh creates a new file and refuses one that exists (a backup's
	// target).
	Fresh bool
}

// Hooks gathers the seams through which the ledger's tests reach what a
// test machine cannot show or time cannot place. Only tests change them:
// outside tests each function is nil (the guard calls it only when set)
// or the product's own behaviour, which tests replace and restore.
var Hooks = struct {
	// Statfs answers for the system's statfs of a ledger's directory,
	// so that a test can present a network file system.
	Statfs func(dir string) (FSStat, error)
	// BeforeCreateFile runs right before a missing database file is
	// created, so that a test can create it first as another opener would.
	BeforeCreateFile func(path string)
	// BeforeMakeDir runs before each missing directory is created, so
	// that a test can create it first as another user would.
	BeforeMakeDir func(dir string)
	// ViewLoading runs while a view is made, between the -wal's stat and
	// the reading of its frames.
	ViewLoading func(path string)
	// SyncParentDir, when set, syncs in place of the system a directory
	// that received a new entry (POSIX), so that a test can see the order
	// of the syncs and fail one.
	SyncParentDir func(dir string) error
	// LockPause sleeps while a read lock is taken.
	LockPause func(time.Duration)
	// ReadLocks is haveReadLocks; a test turns it off to see the change
	// detection work alone, as it does where OFD locks do not exist.
	ReadLocks bool
	// EffectiveUID is os.Geteuid; a test replaces it to show that only
	// root's read-only opens pass another user's directory.
	EffectiveUID func() int
}{
	LockPause:    time.Sleep,
	ReadLocks:    HaveReadLocks,
	EffectiveUID: os.Geteuid,
}
