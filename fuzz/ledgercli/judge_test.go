package ledgercli

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestJudgeArgvCorruptedLedger: a delivery call that answers OK but leaves
// its task without the delivery event (here: the event deleted behind the
// call's back, as a command that forgot to write it would) must fail
// FuzzArgv's oracle. The oracle judged the call's own output only, and a
// doctor run only ever saw the seed ledger, so a command line that
// corrupts the ledger went unseen.
func TestJudgeArgvCorruptedLedger(t *testing.T) {
	t.Setenv(ledgercli.TestClockEnv, "1")
	t.Setenv(ledgercli.TestNowEnv, "978308200")
	seed := seedLedger(t)
	dir := filepath.Join(t.TempDir(), "ledger")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "tasks.sqlite")
	if err := os.WriteFile(db, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	argv := platformtest.ACLArgs("--db", db, "delivery", closedID, "--status", "delivered", "--code", "transport_acknowledged")
	var stdout, stderr bytes.Buffer
	status := ledgercli.Main(argv, &stdout, &stderr)
	if err := judgeArgv(argv, status, stdout.String(), stderr.String(), db); err != nil {
		t.Fatalf("the real call: %v", err)
	}
	conn, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Exec(`DELETE FROM task_events WHERE event_kind = 'delivery_transition'`)
	conn.Close()
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("deleting the delivery event: %d rows, %v", n, err)
	}
	if judgeArgv(argv, status, stdout.String(), stderr.String(), db) == nil {
		t.Fatal("a delivery that left no delivery event passed the oracle")
	}
}
