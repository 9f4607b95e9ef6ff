package ledger

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// TestHostileHeaderIsStateConflict patches bytes 37-47 of the database
// header (schema cookie and schema format number among them) in a copy of a
// healthy ledger: every open, writable or read-only, refuses the file as
// StateConflict, never as an internal error, and leaves its bytes and
// directory exactly as they were. (fuzz/ledgerdb found the read-only case.)
func TestHostileHeaderIsStateConflict(t *testing.T) {
	requireFixtures(t)
	for _, readOnly := range []bool{false, true} {
		p := copyFixture(t, "small-v2.sqlite")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		copy(data[37:48], "00000000000")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = Open(p, Options{AllowExternalACL: onWindows, ReadOnly: readOnly, Clock: fixedClock(2e9)})
		if !errors.Is(err, ErrStateConflict) {
			t.Fatalf("readOnly=%v: got %v, want StateConflict", readOnly, err)
		}
		after, _ := os.ReadFile(p)
		if !bytes.Equal(after, data) {
			t.Fatalf("readOnly=%v: the refused file changed", readOnly)
		}
		for _, side := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Lstat(p + side); err == nil {
				t.Fatalf("readOnly=%v: %s left behind", readOnly, side)
			}
		}
	}
}
