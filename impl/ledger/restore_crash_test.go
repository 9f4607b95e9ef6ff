//go:build linux || darwin

package ledger

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// These restores start from a writer that died with its -wal (the crash
// files of readonly_crashstates_test.go, which build where a crash can be captured
// this way).

// crashedLedger is the ledger of the restore after a crash: 20 tasks, a
// backup of them, 30 more tasks whose frames are still in the -wal when
// the writer dies (the files captured while it runs, with checkpoints
// held off). It returns the ledger's path (the database, its -wal and
// -shm, as the killed writer left them) and the backup's.
func crashedLedger(t *testing.T) (p, backup string) {
	t.Helper()
	l, _, live := openTest(t)
	createTasks(t, l, 20)
	backup = filepath.Join(privateDir(t), "bk", "copy.sqlite")
	if !storageguard.CanCreateDirs {
		if err := os.Mkdir(filepath.Dir(backup), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Backup(backup); err != nil {
		t.Fatal(err)
	}
	keeper := checkpointKeeper(t, live)
	defer keeper.Close()
	createTasks(t, l, 30)
	crashed := captureFiles(t, live)
	if len(crashed.wal) == 0 {
		t.Fatal("the writer's frames are not in its -wal")
	}
	return writeCrashFiles(t, crashed), backup
}

// TestRestoreAfterACrash: the README's old restore (copy the backup over
// the database) after a writer died leaves its -wal, whose frames SQLite
// replays on the copy, so the "restored" ledger holds 50 tasks, or is
// damaged. Restore instead installs exactly the backup (20 tasks, healthy,
// the report equal to the backup's), keeps the crashed ledger and its log
// aside as a ledger of their own (50 tasks), and leaves no log of the old
// ledger beside the restored one.
func TestRestoreAfterACrash(t *testing.T) {
	p, backup := crashedLedger(t)
	if got := doctorAt(t, p); got.TaskCount != 50 || !got.Healthy {
		t.Fatalf("the crashed ledger: %s", reportJSON(got))
	}
	// The hazard is real here: the backup's bytes copied over the
	// database, beside the dead writer's -wal, read as 50 tasks.
	copied := captureFiles(t, p)
	bk, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	copied.db = bk
	if got := doctorAt(t, writeCrashFiles(t, copied)); got.TaskCount != 50 {
		t.Fatalf("a copy over the crashed ledger did not read as the dead writer's 50 tasks: %s", reportJSON(got))
	}
	rep, err := Restore(p, backup, restoreOpts)
	if err != nil {
		t.Fatal(err)
	}
	got := doctorAt(t, p)
	if !got.Healthy || got.TaskCount != 20 || rep.TaskCount != 20 || rep.EventCount != got.EventCount {
		t.Fatalf("restored %+v, the doctor: %s", rep, reportJSON(got))
	}
	if info, err := os.Stat(p); err != nil || info.Size() != rep.Bytes {
		t.Fatalf("report %+v, file %v %v", rep, info, err)
	}
	if _, err := os.Lstat(p + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a -wal lies beside the restored ledger: %v", err)
	}
	if _, err := os.Lstat(p + RestorePartialSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the restore left its copy: %v", err)
	}
	if aside := doctorAt(t, p+SetAsideSuffix); aside.TaskCount != 50 || !aside.Healthy {
		t.Fatalf("the ledger set aside: %s", reportJSON(aside))
	}
	// A writer of the restored ledger writes on the 20 tasks.
	w, err := Open(p, Options{AllowExternalACL: onWindows, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	createTasks(t, w, 1)
	w.Close()
	if got := doctorAt(t, p); got.TaskCount != 21 || !got.Healthy {
		t.Fatalf("after a write: %s", reportJSON(got))
	}
}

// TestRestoreOfAMissingLedger: a ledger that does not exist is restored
// into directories made as init makes them; a -wal and -shm left where no
// database is are set aside first, so the dead log is never read on the
// restored copy.
func TestRestoreOfAMissingLedger(t *testing.T) {
	l, _, _ := openTest(t)
	createTasks(t, l, 4)
	backup := filepath.Join(privateDir(t), "copy.sqlite")
	want, err := l.Backup(backup)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := crashedLedger(t)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	rep, err := Restore(p, backup, restoreOpts)
	if err != nil || rep != want {
		t.Fatalf("restored %+v %v, the backup %+v", rep, err, want)
	}
	if got := doctorAt(t, p); got.TaskCount != 4 || !got.Healthy {
		t.Fatalf("restored: %s", reportJSON(got))
	}
	assertEntries(t, filepath.Dir(p), "ledger.sqlite", "ledger.sqlite.before-restore-shm", "ledger.sqlite.before-restore-wal")
	if !storageguard.CanCreateDirs {
		return
	}
	made := filepath.Join(privateDir(t), "a", "b", "ledger.sqlite")
	if _, err := Restore(made, backup, restoreOpts); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(made), filepath.Dir(filepath.Dir(made))} {
		if info, err := os.Stat(d); err != nil || (storageguard.PosixModes && info.Mode().Perm() != 0o700) {
			t.Fatalf("made directory: %v %v", info, err)
		}
	}
	if got := doctorAt(t, made); got.TaskCount != 4 || !got.Healthy {
		t.Fatalf("restored into made directories: %s", reportJSON(got))
	}
}
