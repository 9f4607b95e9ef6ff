// Package ledgerdb fuzzes the database bytes a ledger is opened on: the
// trust boundary where a hostile or damaged SQLite file meets the read-only
// open, the doctor and the dry run.
//
//	go test ./fuzz/ledgerdb                                  # seed corpus only
//	go test ./fuzz/ledgerdb -run=^$ -fuzz=FuzzReadOnlyLedger -fuzztime=5m
//	go test ./fuzz/ledgerdb -run=^$ -fuzz=FuzzReadOnlyWAL -fuzztime=5m
package ledgerdb

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"
	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
)

// FuzzReadOnlyLedger patches bytes of the reference's healthy small-v2
// ledger at a fuzzed offset (or, with offset 0 and a long patch, replaces
// the whole file), opens the result read-only, and runs the doctor and a
// dry run. Whatever the bytes, nothing may panic, a refused open must carry
// one of the contract's classes, no error text may name the path, and the
// file must be left exactly as it was with no sidecar made.
func FuzzReadOnlyLedger(f *testing.F) {
	base, err := os.ReadFile(filepath.Join(testfixtures.Dir(f, "ledger"), "small-v2.sqlite"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(0), []byte{})                      // the healthy file
	f.Add(uint32(18), []byte{1, 1})                 // rollback-journal header
	f.Add(uint32(0), []byte("SQLite format 2\x00")) // wrong magic
	f.Add(uint32(28), []byte{0, 0, 0, 1})           // database size in pages
	f.Add(uint32(4096+8), []byte{0xff, 0xff, 0xff}) // first b-tree page header
	f.Add(uint32(len(base)-100), bytes.Repeat([]byte{0}, 100))
	f.Add(uint32(16), []byte{0x02, 0x00})             // page size 512
	f.Add(uint32(0), bytes.Repeat([]byte("x"), 5000)) // not a database at all
	f.Fuzz(func(t *testing.T, offset uint32, patch []byte) {
		data := append([]byte(nil), base...)
		if int(offset) < len(data) {
			copy(data[offset:], patch)
		}
		if offset == 0 && len(patch) > 4096 {
			data = patch
		}
		dir := filepath.Join(memdir.TempDir(t), "ledger")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "tasks.sqlite")
		if err := os.WriteFile(db, data, 0o600); err != nil {
			t.Fatal(err)
		}

		l, err := ledger.Open(db, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: func() time.Time { return time.Unix(1e9, 0) }})
		checkErr(t, "open", err, dir)
		// A damaged or hostile file is the caller's input, not our defect:
		// refusing to open it must carry a class, never InternalError.
		if err != nil && !errors.Is(err, ledger.ErrInvalidInput) && !errors.Is(err, ledger.ErrStateConflict) {
			t.Fatalf("open refused without a class: %v", err)
		}
		if err == nil {
			_, derr := l.Doctor()
			checkErr(t, "doctor", derr, dir)
			_, rerr := l.Reconcile(ledger.ReconcileOptions{DryRun: true})
			checkErr(t, "dry run", rerr, dir)
			if _, cerr := l.Create(ledger.CreateParams{}); !errors.Is(cerr, ledger.ErrStateConflict) {
				t.Fatalf("read-only ledger accepted a create: %v", cerr)
			}
			checkErr(t, "close", l.Close(), dir)
		}

		after, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(after, data) {
			t.Fatal("a read-only open changed the database bytes")
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("read-only open left files behind: %v", names)
		}
	})
}

// checkErr accepts nil, a classified error, or an internal error, as long as
// its text never names the path (the privacy contract).
func checkErr(t *testing.T, step string, err error, dir string) {
	t.Helper()
	if err == nil {
		return
	}
	if strings.Contains(err.Error(), dir) {
		t.Fatalf("%s: error text leaks the path: %v", step, err)
	}
}
