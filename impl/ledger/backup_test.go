package ledger

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// listAllTasks returns every task of l in id order.
func listAllTasks(t *testing.T, l *Ledger) []Task {
	t.Helper()
	var out []Task
	f := ListFilter{Limit: ListMaxLimit}
	for {
		page, err := l.List(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Tasks...)
		if page.Next == "" {
			return out
		}
		f.After = page.Next
	}
}

// TestBackupCopiesTheLedger: from a writable and from a read-only ledger,
// the copy is a new 0600 file in a private directory made for it, with
// no sidecar left, healthy, and holds exactly the source's tasks; the
// read-only source is left byte for byte as it was.
func TestBackupCopiesTheLedger(t *testing.T) {
	l, clk, p := openTest(t)
	for i := 0; i < 30; i++ {
		task, err := l.Create(CreateParams{Internal: i%3 == 0})
		if err != nil {
			t.Fatal(err)
		}
		clk.now++
		if i%2 == 0 {
			if _, err := l.CloseTask(task.ID, StatusSucceeded, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := listAllTasks(t, l)
	dir := privateDir(t)
	check := func(target string, got BackupReport) {
		t.Helper()
		info, err := os.Lstat(target)
		if err != nil || (storageguard.PosixModes && info.Mode().Perm() != 0o600) || !info.Mode().IsRegular() {
			t.Fatalf("target: %v %v", info, err)
		}
		assertNoSidecars(t, target)
		c, err := Open(target, Options{AllowExternalACL: onWindows, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rep, err := c.Doctor()
		if err != nil || !rep.Healthy {
			t.Fatalf("copy: %s %v", reportJSON(rep), err)
		}
		if counted := (BackupReport{Bytes: info.Size(), EventCount: rep.EventCount, TaskCount: rep.TaskCount}); got != counted || got.TaskCount != len(want) {
			t.Fatalf("backup reported %+v, the copy holds %+v", got, counted)
		}
		if got := listAllTasks(t, c); !reflect.DeepEqual(got, want) {
			t.Fatalf("copy holds %d tasks, the source %d, or they differ", len(got), len(want))
		}
	}
	target := filepath.Join(dir, "made", "copy.sqlite")
	if !storageguard.CanCreateDirs {
		// Windows never makes a ledger's directory.
		if err := os.Mkdir(filepath.Dir(target), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := l.Backup(target)
	if err != nil {
		t.Fatal(err)
	}
	check(target, rep)
	if info, err := os.Stat(filepath.Dir(target)); err != nil || (storageguard.PosixModes && info.Mode().Perm() != 0o700) {
		t.Fatalf("made directory: %v %v", info, err)
	}
	l.Close()
	before := fileSHA(t, p)
	ro, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	second := filepath.Join(dir, "second.sqlite")
	rep, err = ro.Backup(second)
	if err != nil {
		t.Fatal(err)
	}
	check(second, rep)
	if fileSHA(t, p) != before {
		t.Fatal("the read-only source changed")
	}
}

// TestBackupNeverOverwrites: a target that exists, or appears while the
// backup creates it, is refused and left as it was; a target whose
// directory others can write to is refused as a ledger's would be.
func TestBackupNeverOverwrites(t *testing.T) {
	l, _, _ := openTest(t)
	if _, err := l.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	dir := privateDir(t)
	existing := filepath.Join(dir, "existing.sqlite")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := l.Backup(existing)
	if !errors.Is(err, ErrInvalidInput) || Reason(err) != "backup target already exists" {
		t.Fatalf("existing target: %v", err)
	}
	// The target appears while the copy is made beside it: the rename
	// into place refuses it, and the partial copy goes.
	appearing := filepath.Join(dir, "appearing.sqlite")
	plantBeforeCreate(t, func(path string) {
		if path != appearing+PartialSuffix {
			t.Errorf("the copy is made at %s, want %s", path, appearing+PartialSuffix)
		}
		if err := os.WriteFile(appearing, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	_, err = l.Backup(appearing)
	if !errors.Is(err, ErrInvalidInput) || Reason(err) != "backup target already exists" {
		t.Fatalf("appearing target: %v", err)
	}
	// An interrupted backup's partial copy is left for the operator: a
	// backup to the same target refuses and creates nothing.
	interrupted := filepath.Join(dir, "interrupted.sqlite")
	if err := os.WriteFile(interrupted+PartialSuffix, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = l.Backup(interrupted)
	if !errors.Is(err, ErrInvalidInput) || Reason(err) != "backup partial copy already exists" {
		t.Fatalf("interrupted backup's partial copy: %v", err)
	}
	if _, err := os.Lstat(interrupted); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused backup made its target: %v", err)
	}
	for _, p := range []string{existing, appearing, interrupted + PartialSuffix} {
		if data, err := os.ReadFile(p); err != nil || string(data) != "keep me" {
			t.Fatalf("%s changed: %q %v", p, data, err)
		}
	}
	if _, err := os.Lstat(appearing + PartialSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused backup left its partial copy: %v", err)
	}
	if !storageguard.PosixModes {
		return // no mode bits to make a directory world-writable
	}
	loose := filepath.Join(dir, "loose")
	if err := os.Mkdir(loose, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err = l.Backup(filepath.Join(loose, "copy.sqlite"))
	if !errors.Is(err, ErrInvalidInput) || Reason(err) != "database directory is group- or world-writable" {
		t.Fatalf("world-writable directory: %v", err)
	}
	if entries, _ := os.ReadDir(loose); len(entries) != 0 {
		t.Fatalf("something was made in the world-writable directory: %v", entries)
	}
}

// TestBackupBesideAWriter: a read-only ledger backs up while another
// ledger on the file keeps creating tasks; each copy is healthy and holds
// a prefix of the writer's tasks (a transaction whole or not at all).
// Without OFD locks (Windows, macOS) a read that meets a checkpoint may
// give up (spec 12.4): there a backup may fail, only as StateConflict and
// leaving no file, and some must succeed.
func TestBackupBesideAWriter(t *testing.T) {
	w, _, p := openTest(t)
	if _, err := w.Create(CreateParams{TaskID: fmt.Sprintf("00000000-0000-4000-8000-%012d", 0)}); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	const writes = 60
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= writes; i++ {
			if _, err := w.Create(CreateParams{TaskID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i)}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	dir := privateDir(t)
	copies := 0
	for k := 0; k < 5; k++ {
		target := filepath.Join(dir, fmt.Sprintf("copy-%d.sqlite", k))
		if _, err := ro.Backup(target); err != nil {
			if platformtest.HasOFDLocks || !errors.Is(err, ErrStateConflict) {
				t.Fatal(err)
			}
			if _, serr := os.Lstat(target); serr == nil {
				t.Fatalf("copy %d: a failed backup left %s", k, target)
			}
			continue
		}
		copies++
		c, err := Open(target, Options{AllowExternalACL: onWindows, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Doctor()
		tasks := listAllTasks(t, c)
		c.Close()
		if err != nil || !rep.Healthy {
			t.Fatalf("copy %d: %s %v", k, reportJSON(rep), err)
		}
		for i, task := range tasks {
			if want := fmt.Sprintf("00000000-0000-4000-8000-%012d", i); task.ID != want {
				t.Fatalf("copy %d: task %d is %s, not a prefix of the writes", k, i, task.ID)
			}
		}
	}
	wg.Wait()
	if copies == 0 {
		t.Fatal("no backup succeeded beside the writer")
	}
}

// breakRootPage overwrites bytes [from, to) of the root page of the
// table or index name in the closed ledger at p (whose log was folded in
// at close). Byte 0 is the b-tree page type.
func breakRootPage(t *testing.T, p, name string, from, to int, with byte) {
	t.Helper()
	if _, err := os.Lstat(p + "-wal"); err == nil {
		t.Fatal("the ledger still has a -wal: its pages are not all in the file")
	}
	db, err := sql.Open("sqlite", fileURI(p, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int
	err = db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name = ?", name).Scan(&root)
	if err == nil {
		err = db.QueryRow("PRAGMA page_size").Scan(&pageSize)
	}
	db.Close()
	if err != nil || root < 2 {
		t.Fatalf("%s root page %d: %v", name, root, err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		data[(root-1)*pageSize+i] = with
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBackupRefusesABrokenLedger: a 300-task ledger with a broken page is
// never backed up. Where the doctor refuses the ledger (the tasks table's
// root page has a page type no b-tree has) the backup is refused with the
// same class and reason; where the doctor reports quick_check failed (an
// index page's cells overwritten) the backup is refused with that reason
// too. From a read-only and from a writable ledger, and nothing is left at
// the target or at its partial copy's name.
func TestBackupRefusesABrokenLedger(t *testing.T) {
	cases := []struct {
		name, object  string
		from, to      int
		with          byte
		doctorRefuses bool
	}{
		// 2, 5, 10 and 13 are the b-tree page types.
		{"tasks root page type", "tasks", 0, 1, 0x01, true},
		{"status index cells", "tasks_status_idx", 8, 40, 0xff, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _, p := openTest(t)
			for i := 0; i < 300; i++ {
				if _, err := l.Create(CreateParams{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			breakRootPage(t, p, c.object, c.from, c.to, c.with)
			ro, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			rep, derr := ro.Doctor()
			if c.doctorRefuses {
				if !errors.Is(derr, ErrStateConflict) || Reason(derr) != "database file is not a valid ledger" {
					t.Fatalf("doctor: %v", derr)
				}
			} else if derr != nil || rep.Healthy || rep.QuickCheckOK {
				t.Fatalf("doctor: %s %v", reportJSON(rep), derr)
			}
			dir := privateDir(t)
			for i, source := range []func() (*Ledger, error){
				func() (*Ledger, error) { return ro, nil },
				func() (*Ledger, error) { return Open(p, Options{AllowExternalACL: onWindows, MustExist: true}) },
			} {
				src, err := source()
				if err != nil {
					t.Fatalf("source %d: %v", i, err)
				}
				target := filepath.Join(dir, fmt.Sprintf("copy-%d.sqlite", i))
				_, err = src.Backup(target)
				if !errors.Is(err, ErrStateConflict) || Reason(err) != "database file is not a valid ledger" {
					t.Fatalf("source %d: backup of a broken ledger answered %v, the doctor %v", i, err, derr)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Fatalf("source %d: a refused backup left %v", i, entries)
				}
				if i == 1 {
					src.Close()
				}
			}
		})
	}
}

// TestBackupToAnExistingTargetMakesNothing: a target that exists is
// refused before the partial copy is created, so the refusal costs no copy
// of the ledger and leaves nothing beside the target even for a moment
// (the rename's own refusal would answer the same, after a whole copy).
func TestBackupToAnExistingTargetMakesNothing(t *testing.T) {
	l, _, _ := openTest(t)
	if _, err := l.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	dir := privateDir(t)
	existing := filepath.Join(dir, "existing.sqlite")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	storageguard.Hooks.BeforeCreateFile = func(path string) { t.Errorf("a backup to an existing target created %s", path) }
	t.Cleanup(func() { storageguard.Hooks.BeforeCreateFile = nil })
	_, err := l.Backup(existing)
	if !errors.Is(err, ErrInvalidInput) || Reason(err) != "backup target already exists" {
		t.Fatalf("existing target: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %v", entries)
	}
}
