package ledgerdb

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"
	"github.com/stateguard/stateguard/impl/ledger"
)

// restoreBase is a backup (made by Backup) of a ledger of five tasks in
// every state, and the bytes of a one-task ledger restores go over; both
// are made once.
var restoreBase struct {
	once           sync.Once
	backup, target []byte
	err            error
}

func restoreBaseFiles(t testing.TB) (backup, target []byte) {
	t.Helper()
	restoreBase.once.Do(func() {
		dir, err := os.MkdirTemp("", "restore-base-")
		if err != nil {
			restoreBase.err = err
			return
		}
		defer os.RemoveAll(dir)
		if err := os.Chmod(dir, 0o700); err != nil {
			restoreBase.err = err
			return
		}
		now := time.Unix(1e9, 0)
		clock := func() time.Time { return now }
		l, err := ledger.Open(filepath.Join(dir, "src.sqlite"), ledger.Options{AllowExternalACL: onWindows, Clock: clock})
		if err != nil {
			restoreBase.err = err
			return
		}
		step := func(err error) {
			if restoreBase.err == nil {
				restoreBase.err = err
			}
		}
		root, err := l.Create(ledger.CreateParams{TaskID: restoreRootID})
		step(err)
		child, err := l.Create(ledger.CreateParams{ParentID: root.ID, Internal: true})
		step(err)
		_, err = l.Start(root.ID)
		step(err)
		now = now.Add(time.Second)
		_, err = l.CloseTask(root.ID, ledger.StatusSucceeded, "")
		step(err)
		_, err = l.SetDelivery(root.ID, ledger.DeliveryDelivered, "")
		step(err)
		_, err = l.Start(child.ID)
		step(err)
		for i := 0; i < 3; i++ {
			_, err = l.Create(ledger.CreateParams{})
			step(err)
		}
		_, err = l.Backup(filepath.Join(dir, "copy.sqlite"))
		step(err)
		step(l.Close())
		t2, err := ledger.Open(filepath.Join(dir, "target.sqlite"), ledger.Options{AllowExternalACL: onWindows, Clock: clock})
		step(err)
		if err == nil {
			_, err = t2.Create(ledger.CreateParams{})
			step(err)
			step(t2.Close())
		}
		if restoreBase.err != nil {
			return
		}
		restoreBase.backup, restoreBase.err = os.ReadFile(filepath.Join(dir, "copy.sqlite"))
		if restoreBase.err == nil {
			restoreBase.target, restoreBase.err = os.ReadFile(filepath.Join(dir, "target.sqlite"))
		}
	})
	if restoreBase.err != nil {
		t.Fatal(restoreBase.err)
	}
	return restoreBase.backup, restoreBase.target
}

// restoreRootID is the backup's root task, whose id its rows and indexes
// repeat: the seeds edit each place it is written.
const restoreRootID = "5eed0000-0000-4000-8000-00000000000a"

// FuzzRestoreBackup patches bytes of a healthy backup at a fuzzed offset
// (or, with offset 0 and a long patch, replaces the whole file) and
// restores a one-task ledger from it. Either the restore is refused, with
// a class, and the ledger's bytes and directory are left exactly as they
// were, or it answers ok, and then the ledger reads healthy by the doctor
// with exactly the counts the restore reported, no -wal or restore copy
// beside it, and the replaced ledger set aside byte for byte. Never
// anything between.
func FuzzRestoreBackup(f *testing.F) {
	backup, _ := restoreBaseFiles(f)
	f.Add(uint32(0), []byte{})                      // the healthy backup
	f.Add(uint32(18), []byte{1, 1})                 // rollback-journal header
	f.Add(uint32(0), []byte("SQLite format 2\x00")) // wrong magic
	f.Add(uint32(28), []byte{0, 0, 0, 1})           // database size in pages
	f.Add(uint32(4096), []byte{1})                  // a b-tree page type no page has
	f.Add(uint32(4096+8), []byte{0xff, 0xff, 0xff}) // a b-tree page header
	f.Add(uint32(len(backup)-100), bytes.Repeat([]byte{0}, 100))
	f.Add(uint32(16), []byte{0x02, 0x00})             // page size 512
	f.Add(uint32(0), bytes.Repeat([]byte("x"), 5000)) // not a database at all
	// Each place the root's id is written, its last digit changed: in the
	// child's row that makes an orphan, which SQLite's check passes and
	// the doctor does not.
	for at, i := 0, 0; ; at += i + 1 {
		i = bytes.Index(backup[at:], []byte(restoreRootID))
		if i < 0 {
			break
		}
		f.Add(uint32(at+i+len(restoreRootID)-1), []byte("f"))
	}
	f.Fuzz(func(t *testing.T, offset uint32, patch []byte) {
		base, target := restoreBaseFiles(t)
		data := append([]byte(nil), base...)
		if int(offset) < len(data) {
			copy(data[offset:], patch)
		}
		if offset == 0 && len(patch) > 4096 {
			data = patch
		}
		root := memdir.TempDir(t)
		dir := filepath.Join(root, "ledger")
		bkDir := filepath.Join(root, "backups")
		for _, d := range []string{dir, bkDir} {
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		db := filepath.Join(dir, "tasks.sqlite")
		bk := filepath.Join(bkDir, "copy.sqlite")
		for p, b := range map[string][]byte{db: target, bk: data} {
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := ledger.Restore(db, bk, ledger.Options{AllowExternalACL: onWindows, BusyTimeout: 100 * time.Millisecond})
		checkErr(t, "restore", err, root)
		if err != nil {
			if !errors.Is(err, ledger.ErrInvalidInput) && !errors.Is(err, ledger.ErrStateConflict) {
				t.Fatalf("restore refused without a class: %v", err)
			}
			if got, _ := os.ReadFile(db); !bytes.Equal(got, target) {
				t.Fatal("a refused restore changed the ledger")
			}
			if names := entries(dir); len(names) != 1 {
				t.Fatalf("a refused restore left %v", names)
			}
			return
		}
		l, err := ledger.Open(db, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
		if err != nil {
			t.Fatalf("the restored ledger does not open: %v", err)
		}
		doc, err := l.Doctor()
		l.Close()
		if err != nil || !doc.Healthy || doc.TaskCount != rep.TaskCount || doc.EventCount != rep.EventCount {
			t.Fatalf("restore answered %+v; the doctor: %+v %v", rep, doc, err)
		}
		if info, err := os.Stat(db); err != nil || info.Size() != rep.Bytes {
			t.Fatalf("restore answered %+v; the file: %v %v", rep, info, err)
		}
		if aside, _ := os.ReadFile(db + ledger.SetAsideSuffix); !bytes.Equal(aside, target) {
			t.Fatal("the replaced ledger was not set aside as it was")
		}
		if names := entries(dir); len(names) != 2 {
			t.Fatalf("the restore left %v", names)
		}
	})
}

// entries lists a directory's names, sorted.
func entries(dir string) []string {
	list, _ := os.ReadDir(dir)
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}
