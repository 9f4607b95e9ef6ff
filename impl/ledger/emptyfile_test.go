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
