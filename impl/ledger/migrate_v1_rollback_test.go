package ledger_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
)

// TestV1UnsafeRollbackJournalIsRefusedUntouched: an unsafe v1 ledger is
// refused before WAL is switched on, so the refused file stays byte for
// byte as it was (spec 9.5). The v1 fixtures are in WAL mode already,
// where switching WAL on changes nothing; here the v1 file is in rollback
// journal mode (header bytes 18-19 are 1), so a refusal that came only
// after "journal_mode = WAL" would leave them 2. Planted bug: the check
// before the journal mode is set removed (the one inside the migration's
// transaction still refuses).
func TestV1UnsafeRollbackJournalIsRefusedUntouched(t *testing.T) {
	opts := ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(2e9, 0) }}
	rollbackV1 := func(t *testing.T, stmts ...string) string {
		t.Helper()
		p := privateFixture(t, "v1-safe.sqlite")
		edit(t, p, append([]string{"PRAGMA journal_mode = DELETE"}, stmts...)...)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if b[18] != 1 || b[19] != 1 {
			t.Fatalf("header bytes 18-19 are %d %d, want 1 1 (rollback journal)", b[18], b[19])
		}
		return p
	}
	for _, c := range []struct{ name, stmt string }{
		{"delivery code", "UPDATE tasks SET delivery_code = 'Delivered OK' WHERE id = " + v1Task1},
		{"terminal event code", "UPDATE task_events SET code = 'Worker crashed (OOM)' WHERE task_id = " + v1Task7 + " AND to_value = 'succeeded'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := rollbackV1(t, c.stmt)
			before, _ := os.ReadFile(p)
			l, err := ledger.Open(p, opts)
			if err == nil {
				l.Close()
				t.Fatal("an unsafe v1 file was migrated")
			}
			if !errors.Is(err, ledger.ErrStateConflict) {
				t.Fatalf("writable open: %v, want StateConflict", err)
			}
			after, _ := os.ReadFile(p)
			if !bytes.Equal(after, before) {
				t.Errorf("the refused file changed: header bytes 18-19 %d %d (were %d %d), %d bytes (were %d)",
					after[18], after[19], before[18], before[19], len(after), len(before))
			}
			if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
				t.Errorf("the refusal left %d entries in the directory, want the file alone", len(entries))
			}
		})
	}
	// Control: the same file without the unsafe value migrates into WAL.
	p := rollbackV1(t)
	l, err := ledger.Open(p, opts)
	if err != nil {
		t.Fatalf("safe rollback-journal v1 refused: %v", err)
	}
	l.Close()
	if b, _ := os.ReadFile(p); b[18] != 2 || b[19] != 2 {
		t.Fatalf("migrated file's header bytes 18-19 are %d %d, want 2 2 (WAL)", b[18], b[19])
	}
}
