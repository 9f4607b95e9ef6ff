package ledger

import (
	"os"
	"time"
)

// hooks gathers the seams through which this package's tests reach what
// a test machine cannot show or time cannot place. Outside tests each
// function is nil (production code calls it only when set) or, for the
// pauses and readLocks, the product's own behaviour, which tests replace
// and restore.
var hooks = struct {
	// statfs answers for the system's statfs of a ledger's directory,
	// so that a test can present a network file system.
	statfs func(dir string) (fsStat, error)
	// pruneBatch runs in each applied batch of a prune: after the plan
	// found trees to remove ("read"), inside the write transaction after
	// the removals ("write"; an error rolls the batch back and ends the
	// prune, as a failure there would), and after the batch
	// ("committed"). An error ends the prune there.
	pruneBatch func(batch int, phase string) error
	// doctorQueryFault fails the doctor's query with the given text as an
	// I/O or memory failure would, so that a test can show that every
	// failed check is counted and never reads as healthy.
	doctorQueryFault func(query string) error
	// beforeCreateFile runs right before a missing database file is
	// created, so that a test can create it first as another opener would.
	beforeCreateFile func(path string)
	// beforeInstallMissing runs right before restore renames its copy to
	// the missing ledger's path, so that a test can create the ledger
	// there first, as an init beside the restore would.
	beforeInstallMissing func(path string)
	// beforeMakeDir runs before each missing directory is created, so
	// that a test can create it first as another user would.
	beforeMakeDir func(dir string)
	// syncBackupDir, when set, syncs in place of the system the directory
	// that received a backup's renamed copy (a rename is durable only once
	// its directory is), so that a test can see when it runs and fail it.
	syncBackupDir func(dir string) error
	// onSetupBusy runs before each wait of retryBusy.
	onSetupBusy func()
	// duringReadOnlyRead runs inside every read transaction of a read-only
	// ledger, after BEGIN and before the first read, so that a test can
	// change the files there.
	duringReadOnlyRead func(path string)
	// afterReadOnlyRead runs after every read transaction of a read-only
	// ledger's operations, before the files are checked.
	afterReadOnlyRead func(path string)
	// readOnlyPause sleeps between a read-only read's attempts.
	readOnlyPause func(time.Duration)
	// lockPause sleeps while a read lock is taken.
	lockPause func(time.Duration)
	// readLocks is haveReadLocks; a test turns it off to see the change
	// detection work alone, as it does where OFD locks do not exist.
	readLocks bool
	// effectiveUID is os.Geteuid; a test replaces it to show that only
	// root's read-only opens pass another user's directory.
	effectiveUID func() int
}{
	readOnlyPause: time.Sleep,
	lockPause:     time.Sleep,
	readLocks:     haveReadLocks,
	effectiveUID:  os.Geteuid,
}
