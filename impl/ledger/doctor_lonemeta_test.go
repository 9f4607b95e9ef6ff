package ledger

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestDoctorVersionFromLoneMeta: a file whose only table is schema_meta
// is no ledger (the early-return report), but the version its metadata
// states is still the one reported (spec 8.5).
func TestDoctorVersionFromLoneMeta(t *testing.T) {
	p := filepath.Join(privateDir(t), "meta-only.sqlite")
	db, err := sql.Open("sqlite", fileURI(p, "mode=rwc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"PRAGMA journal_mode = WAL",
		"CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
		"INSERT INTO schema_meta VALUES ('schema_version', '2')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Doctor()
	if err != nil || rep.SchemaOK || rep.SchemaVersion != 2 || rep.DoctorErrorCount != 1 || rep.Healthy {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
}
