package ledger

import (
	"strings"
	"testing"
)

// TestFingerprintRemembered: the remembered fingerprint is the one
// computed afresh, whichever objects came before (spec 9.2: the v2
// constant for the schema this package creates), and an object that
// differs in one byte of its SQL or in its name gets its own.
func TestFingerprintRemembered(t *testing.T) {
	v2 := expectedObjects()
	if got := computeFingerprint(v2); got != schemaFingerprint {
		t.Fatalf("v2 objects: %s, want %s", got, schemaFingerprint)
	}
	extraSpace := expectedObjects()
	extraSpace[1].sql = strings.Replace(extraSpace[1].sql, " ", " \t\n ", 1) // one run: same fingerprint
	otherSQL := expectedObjects()
	otherSQL[3].sql = `CREATE INDEX tasks_parent_idx ON tasks(status)`
	renamed := expectedObjects()
	renamed[4].name = "tasks_status_idx2"
	dropped := expectedObjects()[:5]
	for _, objects := range [][]schemaObject{v2, v2, otherSQL, v2, renamed, extraSpace, dropped, dropped, nil, v2, otherSQL, otherSQL} {
		if got, want := fingerprint(objects), computeFingerprint(objects); got != want {
			t.Fatalf("fingerprint of %d objects: %s, computed afresh %s", len(objects), got, want)
		}
	}
	if fingerprint(otherSQL) == schemaFingerprint || fingerprint(renamed) == schemaFingerprint || fingerprint(extraSpace) != schemaFingerprint {
		t.Fatal("the remembered fingerprint ignores the objects")
	}
	// The memory holds its own copy: the caller's slice changed after the
	// call is not taken for the objects fingerprinted.
	mine := expectedObjects()
	fingerprint(mine)
	mine[2].sql = "CREATE TABLE task_events (x)"
	if got := fingerprint(append([]schemaObject(nil), mine...)); got == schemaFingerprint {
		t.Fatal("objects changed after the call answer the fingerprint of the objects before")
	}
}
