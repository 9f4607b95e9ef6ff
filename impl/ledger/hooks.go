package ledger

import "time"

// hooks gathers the seams through which this package's tests reach what
// a test machine cannot show or time cannot place. Outside tests each
// function is nil (production code calls it only when set) or, for the
// pause, the product's own behaviour, which tests replace and restore.
// The storage guard's seams are storageguard.Hooks.
var hooks = struct {
	// pruneBatch runs in each applied batch of a prune: after the plan
	// found trees to remove ("read"), inside the write transaction after
	// the removals ("write"; an error rolls the batch back and ends the
	// prune, as a failure there would), and after the batch
	// ("committed"). An error ends the prune there.
	pruneBatch func(batch int, phase string) error
	// doctorQueryFault fails the doctor's query with the given text as an
	// I/O or memory failure would, so that a test can show that every
	// failed check is counted and never reads as healthy. It also sees
	// each PRAGMA quick_check, the doctor's or a backup's check of its
	// copy.
	doctorQueryFault func(query string) error
	// beforeInstallMissing runs right before restore renames its copy to
	// the missing ledger's path, so that a test can create the ledger
	// there first, as an init beside the restore would.
	beforeInstallMissing func(path string)
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
	// waitingForTurn runs when an operation finds another running on the
	// same *Ledger and starts to wait for its turn.
	waitingForTurn func()
	// readOnlyPause sleeps between a read-only read's attempts.
	readOnlyPause func(time.Duration)
}{
	readOnlyPause: time.Sleep,
}
