package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestEmptyFile: a zero-byte database file (what an open that fails after
// creating the file leaves, spec 19.1) is refused by a read-only open and
// left empty, and becomes a fresh v2 ledger on a writable open.
func TestEmptyFile(t *testing.T) {
	p := filepath.Join(privateDir(t), "tasks.sqlite")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err == nil {
		r.Close()
	}
	if !errors.Is(err, ErrStateConflict) {
		t.Fatalf("read-only open of an empty file: %v, want StateConflict", err)
	}
	if st, err := os.Stat(p); err != nil || st.Size() != 0 {
		t.Fatalf("read-only open changed the empty file: %v", err)
	}
	if names := dirNames(t, filepath.Dir(p)); len(names) != 1 {
		t.Fatalf("read-only open left %v", names)
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
	if err != nil {
		t.Fatalf("writable open of an empty file: %v", err)
	}
	defer l.Close()
	if v := l.SchemaVersion(); v != 2 {
		t.Fatalf("schema version %d, want 2", v)
	}
	rep, err := l.Doctor()
	if err != nil || !rep.Healthy || !rep.SchemaOK {
		t.Fatalf("doctor on the new ledger: %+v, %v", rep, err)
	}
}

// TestHeaderBeingWritten: a database file whose header is only partly
// there (the magic string, then zeros where the file format versions
// go), as a read can see the first page of a ledger that another process
// is creating at that moment, is a ledger not yet valid: StateConflict,
// as an empty file is, never InvalidInput "database is not in WAL mode",
// which tells the caller to fix the storage. The file is left
// as it was.
func TestHeaderBeingWritten(t *testing.T) {
	p := filepath.Join(privateDir(t), "tasks.sqlite")
	page := make([]byte, 4096)
	copy(page, "SQLite format 3\x00")
	if err := os.WriteFile(p, page, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err == nil {
		r.Close()
	}
	if !errors.Is(err, ErrStateConflict) || Reason(err) != "database file is not a valid ledger" {
		t.Fatalf("read-only open of a header being written: %v, want StateConflict (not a valid ledger)", err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != string(page) {
		t.Fatalf("read-only open changed the file: %v", err)
	}
}
