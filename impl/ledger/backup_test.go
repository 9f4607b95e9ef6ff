package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

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
	check := func(target string) {
		t.Helper()
		info, err := os.Lstat(target)
		if err != nil || (posixModes && info.Mode().Perm() != 0o600) || !info.Mode().IsRegular() {
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
		if got := listAllTasks(t, c); !reflect.DeepEqual(got, want) {
			t.Fatalf("copy holds %d tasks, the source %d, or they differ", len(got), len(want))
		}
	}
	target := filepath.Join(dir, "made", "copy.sqlite")
	if !canCreateDirs {
		// Windows never makes a ledger's directory.
		if err := os.Mkdir(filepath.Dir(target), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Backup(target); err != nil {
		t.Fatal(err)
	}
	check(target)
	if info, err := os.Stat(filepath.Dir(target)); err != nil || (posixModes && info.Mode().Perm() != 0o700) {
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
	if err := ro.Backup(second); err != nil {
		t.Fatal(err)
	}
	check(second)
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
	err := l.Backup(existing)
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
	err = l.Backup(appearing)
	if !errors.Is(err, ErrInvalidInput) || Reason(err) != "backup target already exists" {
		t.Fatalf("appearing target: %v", err)
	}
	// An interrupted backup's partial copy is left for the operator: a
	// backup to the same target refuses and creates nothing.
	interrupted := filepath.Join(dir, "interrupted.sqlite")
	if err := os.WriteFile(interrupted+PartialSuffix, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = l.Backup(interrupted)
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
	if !posixModes {
		return // no mode bits to make a directory world-writable
	}
	loose := filepath.Join(dir, "loose")
	if err := os.Mkdir(loose, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o777); err != nil {
		t.Fatal(err)
	}
	err = l.Backup(filepath.Join(loose, "copy.sqlite"))
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
		if err := ro.Backup(target); err != nil {
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
