//go:build linux || darwin

package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// TestKilledFirstCreationRecovers: a kill inside SQLite's first creation
// of a ledger leaves an empty database file beside an empty -wal (SQLite
// makes the -wal, then the -shm, before it writes a page). That is a
// ledger nobody was promised yet, not a damaged one: a read-only open
// answers what it answers for an empty file, StateConflict "database file
// is not a valid ledger" (spec 19.1 item 24), and changes nothing; a
// writable open makes a fresh v2 ledger of it (9.5). Planted bug: the
// writable open refuses it for good (a failed view beside a -wal taken for
// a refusal).
func TestKilledFirstCreationRecovers(t *testing.T) {
	for _, withSHM := range []bool{false, true} {
		t.Run(map[bool]string{false: "wal", true: "wal and shm"}[withSHM], func(t *testing.T) {
			c := crashFiles{db: []byte{}, wal: []byte{}}
			if withSHM {
				c.shm = []byte{}
			}
			p := writeCrashFiles(t, c)
			before := snapshotDir(t, filepath.Dir(p))
			r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
			if err == nil {
				r.Close()
			}
			if !errors.Is(err, ErrStateConflict) || err.Error() != storageguard.ErrNotLedgerFile.Error() {
				t.Fatalf("read-only open: %v, want StateConflict %q", err, storageguard.ErrNotLedgerFile)
			}
			if !sameSnapshot(before, snapshotDir(t, filepath.Dir(p))) {
				t.Fatal("the read-only open changed the files")
			}
			w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
			if err != nil {
				t.Fatalf("writable open of a killed first creation: %v, want a fresh ledger", err)
			}
			defer w.Close()
			if v := w.SchemaVersion(); v != 2 {
				t.Fatalf("schema version %d, want 2", v)
			}
			if _, err := w.Create(CreateParams{}); err != nil {
				t.Fatal(err)
			}
			rep, err := w.Doctor()
			if err != nil || !rep.Healthy || !rep.SchemaOK || rep.TaskCount != 1 {
				t.Fatalf("doctor on the recovered ledger: %s %v", reportJSON(rep), err)
			}
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				t.Fatalf("the database file is still empty: %v", err)
			}
		})
	}
}
