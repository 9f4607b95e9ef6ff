//go:build linux || darwin

package ledger

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadOnlyOpenKeepsOwnerOnlyModes: a read-only open changes nothing
// (spec 12.1), the mode of an owner-only file included. A 0400 database
// file and a 0400 -wal (and -shm) are private, so the open goes past the
// mode checks and reads them; afterwards every file has the mode and the
// bytes it had. The tests of loose modes cannot see this: a group- or
// world-readable file is refused before any chmod could happen.
func TestReadOnlyOpenKeepsOwnerOnlyModes(t *testing.T) {
	states, ids := crashStates(t)
	for _, name := range []string{"clean", "wal-alone", "pair"} {
		t.Run(name, func(t *testing.T) {
			c := states[name]
			p := writeCrashFiles(t, c)
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if err := os.Chmod(p+suffix, 0o400); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			before := snapshotDir(t, filepath.Dir(p))
			l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(200000)})
			if err != nil {
				t.Fatalf("read-only open of owner-only files: %v", err)
			}
			got := ledgerAnswers(t, l, ids)
			l.Close()
			if after := snapshotDir(t, filepath.Dir(p)); !sameSnapshot(before, after) {
				for f, was := range before {
					if now := after[f]; now != was {
						t.Errorf("%s: mode %s before, %s after (or its bytes changed)", f, was[:10], now[:min(10, len(now))])
					}
				}
				t.Fatalf("the read-only open changed the directory (%d files before, %d after)", len(before), len(after))
			}
			if want := writerAnswers(t, c, ids); got != want {
				t.Fatalf("read-only answers\n%s\nwriter answers\n%s", got, want)
			}
		})
	}
}
