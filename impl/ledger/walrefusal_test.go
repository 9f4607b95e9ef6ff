//go:build linux || darwin

package ledger

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stateguard/stateguard/internal/storage/walfile"
)

// sealWALHeader recomputes a -wal header's checksum (SQLite's
// "Database File Format" page, 4.3) after a test changed its first 24
// bytes, so that SQLite and walfile take the header for a valid one.
func sealWALHeader(h []byte) {
	s0, s1 := walChecksum(walWordOrder(h), h[:24], 0, 0)
	binary.BigEndian.PutUint32(h[24:], s0)
	binary.BigEndian.PutUint32(h[28:], s1)
}

// refusedUntouched opens c for writing and requires StateConflict
// with the database, its -wal and the directory's listing as they were
// (spec 9.5).
func refusedUntouched(t *testing.T, c crashFiles) {
	t.Helper()
	p := writeCrashFiles(t, c)
	before := dirNames(t, filepath.Dir(p))
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
	if err == nil {
		l.Close()
	}
	if !errors.Is(err, ErrStateConflict) {
		t.Fatalf("writable open: %v, want StateConflict", err)
	}
	filesAsBefore(t, p, c, before)
}

// filesAsBefore requires the database at p and its -wal to hold c's bytes
// and p's directory to list before.
func filesAsBefore(t *testing.T, p string, c crashFiles, before []string) {
	t.Helper()
	if got, _ := os.ReadFile(p); !bytes.Equal(got, c.db) {
		t.Errorf("refused database file changed")
	}
	if got, err := os.ReadFile(p + "-wal"); err != nil || !bytes.Equal(got, c.wal) {
		t.Errorf("refused file's -wal changed or vanished: %v", err)
	}
	if after := dirNames(t, filepath.Dir(p)); !slices.Equal(after, before) {
		t.Errorf("directory %v, want %v", after, before)
	}
}

// TestWALFormatRefusalLeavesFilesUnchanged: a -wal SQLite refuses
// for its own format (an unknown format version, spec 12.3 item 2), or
// whose commits are in another page size than the database's, is refused
// by the writable open with the files and the directory as they were. The
// view finds both while it is made; the writable connection it fell back
// to made a -shm for the first and, for the second, checkpointed the
// foreign log into the refused file and deleted it.
func TestWALFormatRefusalLeavesFilesUnchanged(t *testing.T) {
	states, _ := crashStates(t)
	st := states["wal-alone"]
	t.Run("unknown format version", func(t *testing.T) {
		wal := append([]byte(nil), st.wal...)
		binary.BigEndian.PutUint32(wal[4:], 3007001)
		sealWALHeader(wal)
		refusedUntouched(t, st.withWAL(wal))
	})
	t.Run("commits in another page size", func(t *testing.T) {
		p := filepath.Join(privateDir(t), "other.sqlite")
		other, err := sql.Open("sqlite", "file:"+p+"?mode=rwc")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		other.SetMaxOpenConns(1)
		for _, q := range []string{"PRAGMA page_size = 8192", "PRAGMA journal_mode = WAL",
			"PRAGMA wal_autocheckpoint = 0", "CREATE TABLE x (a)", "INSERT INTO x VALUES (1)"} {
			if _, err := other.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		wal, err := os.ReadFile(p + "-wal")
		if err != nil || len(wal) < walfile.HeaderSize || binary.BigEndian.Uint32(wal[8:]) == uint32(binary.BigEndian.Uint16(st.db[16:])) {
			t.Fatalf("want a -wal with commits in another page size: %v", err)
		}
		refusedUntouched(t, st.withWAL(wal))
	})
}
