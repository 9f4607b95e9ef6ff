//go:build linux || darwin

package ledger

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestSnapshotSourceChanged changes the file between the two reads of
// every attempt: the read-only open gives up with StateConflict.
func TestSnapshotSourceChanged(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	attempts := 0
	betweenSnapshotReads = func(path string) {
		attempts++
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 4096))
		f.Close()
	}
	defer func() { betweenSnapshotReads = nil }()
	_, err := Open(p, Options{ReadOnly: true})
	wantClass(t, err, ErrStateConflict)
	if attempts != readOnlyAttempts {
		t.Fatalf("attempts %d", attempts)
	}
}

// TestSnapshotRetrySucceeds changes the file only during the first
// attempt: the second attempt reads a stable copy (divergence L4).
func TestSnapshotRetrySucceeds(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	attempts := 0
	betweenSnapshotReads = func(path string) {
		attempts++
		if attempts == 1 {
			now := int64(attempts)
			os.Chtimes(path, unixTime(now), unixTime(now))
		}
	}
	defer func() { betweenSnapshotReads = nil }()
	l, err := Open(p, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if attempts != 2 {
		t.Fatalf("attempts %d", attempts)
	}
	if rep, err := l.Doctor(); err != nil || !rep.Healthy {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
}

func TestSnapshotTooLarge(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	if err := os.Truncate(p, maxSnapshotBytes+4096); err != nil {
		t.Fatal(err)
	}
	_, err := Open(p, Options{ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
}

// TestReadOnlyNeedsWAL: a rollback-journal database is refused read-only
// and left as it was.
func TestReadOnlyNeedsWAL(t *testing.T) {
	dir := privateDir(t)
	p := filepath.Join(dir, "plain.sqlite")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, ddl := range schemaDDL {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	os.Chmod(p, 0o600)
	before := fileSHA(t, p)
	_, err = Open(p, Options{ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
	if fileSHA(t, p) != before {
		t.Fatal("file changed")
	}
}

// TestSnapshotScrubbed reads the in-memory copy back after the scrub that
// Close runs: no task id may be left in it, neither in live pages nor in
// freed ones.
func TestSnapshotScrubbed(t *testing.T) {
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	w, err := Open(p, Options{Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 50; i++ {
		task, err := w.Create(CreateParams{DeliveryRequired: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	w.Close()
	l, err := Open(p, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.inMemory {
		t.Fatal("not an in-memory snapshot")
	}
	image := func() []byte {
		var b []byte
		err := l.conn.Raw(func(dc any) error {
			var err error
			b, err = dc.(interface{ Serialize() ([]byte, error) }).Serialize()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Contains(image(), []byte(ids[0])) {
		t.Fatal("the copy does not hold the ids to begin with")
	}
	l.scrubMemory()
	after := image()
	for _, id := range ids {
		if bytes.Contains(after, []byte(id)) {
			t.Fatalf("id %d survived the scrub", len(id))
		}
	}
}
