package ledger

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// restoreOpts are the options of every restore in these tests.
var restoreOpts = Options{AllowExternalACL: onWindows, BusyTimeout: 200 * time.Millisecond}

// countTasks opens p read-only and returns its doctor's report.
func doctorAt(t *testing.T, p string) DoctorReport {
	t.Helper()
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", filepath.Base(p), err)
	}
	defer l.Close()
	rep, err := l.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// createTasks creates n tasks in l.
func createTasks(t *testing.T, l *Ledger, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := l.Create(CreateParams{}); err != nil {
			t.Fatal(err)
		}
	}
}

// assertUntouched fails unless the directory of p holds exactly names.
func assertEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("the directory holds %v, want %v", got, names)
	}
	for i := range names {
		if got[i] != names[i] {
			t.Fatalf("the directory holds %v, want %v", got, names)
		}
	}
}

// TestRestoreRefusesALedgerInUse: while another connection has the ledger
// open (a writable ledger of this process, holding SQLite's shared lock
// as every connection to a WAL ledger does), the restore is refused with
// a fixed reason, and the ledger, its directory and the open ledger's
// work are as they were. Once it is closed, the restore succeeds.
func TestRestoreRefusesALedgerInUse(t *testing.T) {
	l, _, p := openTest(t)
	createTasks(t, l, 3)
	backup := filepath.Join(privateDir(t), "copy.sqlite")
	if _, err := l.Backup(backup); err != nil {
		t.Fatal(err)
	}
	createTasks(t, l, 2)
	_, err := Restore(p, backup, restoreOpts)
	if !errors.Is(err, ErrStateConflict) || Reason(err) != "database is open in another connection" {
		t.Fatalf("restore beside an open ledger: %v", err)
	}
	assertEntries(t, filepath.Dir(p), "ledger.sqlite", "ledger.sqlite-shm", "ledger.sqlite-wal")
	createTasks(t, l, 1)
	if rep, err := l.Doctor(); err != nil || rep.TaskCount != 6 || !rep.Healthy {
		t.Fatalf("the open ledger after the refusal: %s %v", reportJSON(rep), err)
	}
	l.Close()
	assertEntries(t, filepath.Dir(p), "ledger.sqlite")
	rep, err := Restore(p, backup, restoreOpts)
	if err != nil || rep.TaskCount != 3 {
		t.Fatalf("restore once closed: %+v %v", rep, err)
	}
	assertEntries(t, filepath.Dir(p), "ledger.sqlite", "ledger.sqlite"+SetAsideSuffix)
}

// TestRestoreRefusals: a damaged backup (refused as backup refuses its
// copy), a backup that is the ledger itself, a restore's copy or a set-
// aside ledger left by an earlier restore: each is refused with its
// reason and the ledger and its directory are left as they were.
func TestRestoreRefusals(t *testing.T) {
	l, _, _ := openTest(t)
	createTasks(t, l, 300)
	dir := privateDir(t)
	good := filepath.Join(dir, "good.sqlite")
	if _, err := l.Backup(good); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.sqlite")
	if _, err := l.Backup(broken); err != nil {
		t.Fatal(err)
	}
	breakRootPage(t, broken, "tasks", 0, 1, 0x01)
	l.Close()
	cases := []struct {
		name   string
		from   func(p string) string
		plant  string
		class  error
		reason string
	}{
		{"damaged backup", func(string) string { return broken }, "", ErrStateConflict, "database file is not a valid ledger"},
		{"the ledger itself", func(p string) string { return p }, "", ErrInvalidInput, "restore source is the ledger itself"},
		{"missing backup", func(string) string { return filepath.Join(dir, "none.sqlite") }, "", ErrInvalidInput, "database does not exist"},
		{"an earlier restore's copy", func(string) string { return good }, RestorePartialSuffix, ErrInvalidInput, "restore partial copy already exists"},
		{"an earlier restore's set-aside ledger", func(string) string { return good }, SetAsideSuffix, ErrInvalidInput, "a ledger set aside by an earlier restore exists"},
		{"an earlier restore's set-aside log", func(string) string { return good }, SetAsideSuffix + "-wal", ErrInvalidInput, "a ledger set aside by an earlier restore exists"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, _, p := openTest(t)
			createTasks(t, w, 2)
			w.Close()
			before := fileSHA(t, p)
			names := []string{"ledger.sqlite"}
			if c.plant != "" {
				if err := os.WriteFile(p+c.plant, []byte("keep me"), 0o600); err != nil {
					t.Fatal(err)
				}
				names = append(names, "ledger.sqlite"+c.plant)
			}
			_, err := Restore(p, c.from(p), restoreOpts)
			if !errors.Is(err, c.class) || Reason(err) != c.reason {
				t.Fatalf("got %v, want %v %q", err, c.class, c.reason)
			}
			if fileSHA(t, p) != before {
				t.Fatal("the ledger changed")
			}
			assertEntries(t, filepath.Dir(p), names...)
		})
	}
}

// TestRestoreOfAMissingLedgerThatAppears: a ledger created at the path
// while the restore of the missing ledger made its copy is never replaced
// by the rename that installs the copy: the restore is refused and the new
// ledger kept as it is, and the copy removed.
func TestRestoreOfAMissingLedgerThatAppears(t *testing.T) {
	l, _, _ := openTest(t)
	createTasks(t, l, 2)
	backup := filepath.Join(privateDir(t), "copy.sqlite")
	if _, err := l.Backup(backup); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	hooks.beforeInstallMissing = func(path string) {
		hooks.beforeInstallMissing = nil
		n, err := Open(path, Options{AllowExternalACL: onWindows})
		if err != nil {
			t.Fatal(err)
		}
		createTasks(t, n, 1)
		n.Close()
	}
	t.Cleanup(func() { hooks.beforeInstallMissing = nil })
	_, err := Restore(p, backup, restoreOpts)
	if !errors.Is(err, ErrStateConflict) || Reason(err) != "database appeared while it was restored" {
		t.Fatalf("got %v", err)
	}
	if got := doctorAt(t, p); got.TaskCount != 1 {
		t.Fatalf("the ledger that appeared: %s", reportJSON(got))
	}
	assertEntries(t, filepath.Dir(p), "ledger.sqlite")
}

// TestRestoreOverADamagedLedger: a ledger with a broken page (the doctor
// refuses it) is restored and kept aside as it was; one whose first page
// SQLite cannot read at all is refused as the doctor refuses it, and left
// as it was.
func TestRestoreOverADamagedLedger(t *testing.T) {
	l, _, p := openTest(t)
	createTasks(t, l, 300)
	backup := filepath.Join(privateDir(t), "copy.sqlite")
	if _, err := l.Backup(backup); err != nil {
		t.Fatal(err)
	}
	l.Close()
	breakRootPage(t, p, "tasks", 0, 1, 0x01)
	damaged := fileSHA(t, p)
	if rep, err := Restore(p, backup, restoreOpts); err != nil || rep.TaskCount != 300 {
		t.Fatalf("restore over a broken page: %+v %v", rep, err)
	}
	if got := doctorAt(t, p); !got.Healthy || got.TaskCount != 300 {
		t.Fatalf("restored: %s", reportJSON(got))
	}
	if fileSHA(t, p+SetAsideSuffix) != damaged {
		t.Fatal("the damaged ledger was not kept aside as it was")
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(p + SetAsideSuffix + suffix)
	}
	assertEntries(t, filepath.Dir(p), "ledger.sqlite")
	if err := os.WriteFile(p, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Restore(p, backup, restoreOpts)
	if !errors.Is(err, ErrStateConflict) || Reason(err) != "database file is not a valid ledger" {
		t.Fatalf("restore over a file that is no database: %v", err)
	}
	assertEntries(t, filepath.Dir(p), "ledger.sqlite")
}

// TestRestoreRefusesAnUnhealthyBackup: a backup whose pages and schema
// hold (quick_check ok) but whose rows the doctor finds inconsistent (an
// event moved to a task that does not exist) is refused, and the ledger
// left as it was: restore installs only what the doctor calls healthy.
func TestRestoreRefusesAnUnhealthyBackup(t *testing.T) {
	l, _, _ := openTest(t)
	createTasks(t, l, 3)
	backup := filepath.Join(privateDir(t), "copy.sqlite")
	if _, err := l.Backup(backup); err != nil {
		t.Fatal(err)
	}
	l.Close()
	db, err := sql.Open("sqlite", fileURI(backup, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("PRAGMA foreign_keys = OFF; UPDATE task_events SET task_id = '00000000-0000-4000-8000-0000000000ff' WHERE sequence = 1; PRAGMA wal_checkpoint(TRUNCATE)")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rep := doctorAt(t, backup); rep.Healthy || !rep.QuickCheckOK {
		t.Fatalf("the backup: %s", reportJSON(rep))
	}
	w, _, p := openTest(t)
	createTasks(t, w, 1)
	w.Close()
	before := fileSHA(t, p)
	_, err = Restore(p, backup, restoreOpts)
	if !errors.Is(err, ErrStateConflict) || Reason(err) != "backup is not a healthy ledger" {
		t.Fatalf("got %v", err)
	}
	if fileSHA(t, p) != before {
		t.Fatal("the ledger changed")
	}
	assertEntries(t, filepath.Dir(p), "ledger.sqlite")
}
