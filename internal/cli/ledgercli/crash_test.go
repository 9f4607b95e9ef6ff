package ledgercli

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestReadCommandsOnLoneWAL is the lone -wal defect through the command line:
// a killed writer leaves ledger.sqlite-wal without -shm, empty or holding
// committed frames. doctor, reconcile --dry-run, get and children answer
// (the committed task included) instead of StateConflict, and leave the
// files as they were.
func TestReadCommandsOnLoneWAL(t *testing.T) {
	env := pinnedEnv("1700000000")
	src := filepath.Join(t.TempDir(), "ledger.sqlite")
	mustRun := func(db string, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if st := run(platformtest.ACLArgs(append([]string{"--db", db}, args...)...), &out, env); st != 0 {
			t.Fatalf("%v: exit %d %s", args, st, out.String())
		}
		return out.String()
	}
	mustRun(src, "init")
	// A second connection keeps the writer's close from checkpointing, so
	// the -wal stays as a SIGKILL leaves it.
	keeper, err := sql.Open("sqlite", "file:"+src+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	defer keeper.Close()
	keeper.SetMaxOpenConns(1)
	if _, err := keeper.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := keeper.Exec("SELECT count(*) FROM tasks"); err != nil {
		t.Fatal(err)
	}
	id := "7a5c0001-0000-4000-8000-000000000001"
	mustRun(src, "create", "--task-id", id)
	db, _ := os.ReadFile(src)
	wal, _ := os.ReadFile(src + "-wal")
	if len(wal) == 0 {
		t.Fatal("no committed frames in the -wal")
	}
	for name, walBytes := range map[string][]byte{"empty": {}, "committed": wal} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.Chmod(dir, 0o700)
			p := filepath.Join(dir, "ledger.sqlite")
			os.WriteFile(p, db, 0o600)
			os.WriteFile(p+"-wal", walBytes, 0o600)
			doctor := mustRun(p, "doctor")
			wantTasks := map[string]string{"empty": `"task_count":0`, "committed": `"task_count":1`}[name]
			if !strings.Contains(doctor, `"healthy":true`) || !strings.Contains(doctor, wantTasks) {
				t.Fatalf("doctor: %s", doctor)
			}
			mustRun(p, "reconcile", "--dry-run")
			if name == "committed" {
				if got := mustRun(p, "get", id); !strings.Contains(got, id) {
					t.Fatalf("get: %s", got)
				}
				mustRun(p, "children", id)
			}
			after, _ := os.ReadFile(p + "-wal")
			if _, err := os.Lstat(p + "-shm"); err == nil || !bytes.Equal(after, walBytes) {
				t.Fatal("the read-only commands changed the sidecars")
			}
		})
	}
}
