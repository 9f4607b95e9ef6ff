package sweepcli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/storage/durable"
)

// faultBase is a leased state file with one item, the "previous state" of
// the fault tests.
const faultBase = "schema_version: 1\nlease:\n  writer: \"w1\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: 60\n" +
	"sources: {}\nitems:\n  \"s:1\":\n    source: \"s\"\n    status: \"ingested\"\n    id: \"1\"\n"

// faultUpsert is the mutating call the fault tests make.
var faultUpsert = []string{"upsert-item", "--source", "s", "--id", "2", "--json", `{"status": "ingested"}`, "--writer", "w1", "--now", "2026-07-02T12:05:00Z"}

// TestSyncFailuresAnswerError: an fsync that fails (injected through
// durable's seam; the engine itself is real) answers ERROR with a reason on
// stderr and exit 0. A failed sync of the temporary file leaves the
// previous state exactly as it was and no temporary file; a failed sync of
// the directory comes after the rename, so the new document is in place but
// the caller learns it may not survive a power cut. Either way the next
// call succeeds.
func TestSyncFailuresAnswerError(t *testing.T) {
	boom := errors.New("injected EIO")
	for _, step := range []string{"sync file", "sync directory"} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state.yml")
			if err := os.WriteFile(state, []byte(faultBase), 0o600); err != nil {
				t.Fatal(err)
			}
			ops := durable.DefaultOps()
			if step == "sync file" {
				ops.SyncFile = func(*os.File) error { return boom }
			} else {
				ops.SyncDir = func(string) error { return boom }
			}
			restore := durable.SetOps(ops)
			rc, stdout, stderr := runCLI(t, withState(faultUpsert, state)...)
			restore()
			if rc != 0 || stdout != "ERROR\n" || !strings.Contains(stderr, "cannot write the state file") {
				t.Fatalf("exit %d stdout %q stderr %q, want ERROR", rc, stdout, stderr)
			}
			got, _ := os.ReadFile(state)
			if step == "sync file" && string(got) != faultBase {
				t.Errorf("previous state changed:\n%s", got)
			}
			if step == "sync directory" && !strings.Contains(string(got), `"s:2"`) {
				t.Errorf("the renamed document is not in place:\n%s", got)
			}
			assertNoTemp(t, dir)
			assertNextCallSucceeds(t, state)
		})
	}
}

// TestLockPathBlockedAnswersError: a lock file that cannot be created or
// opened (a directory sits at <state>.lock) answers ERROR, writes nothing,
// and once the obstacle is gone the next call succeeds.
func TestLockPathBlockedAnswersError(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yml")
	if err := os.WriteFile(state, []byte(faultBase), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(state+".lock", 0o700); err != nil {
		t.Fatal(err)
	}
	rc, stdout, stderr := runCLI(t, withState(faultUpsert, state)...)
	if rc != 0 || stdout != "ERROR\n" || !strings.Contains(stderr, "cannot lock") {
		t.Fatalf("exit %d stdout %q stderr %q, want ERROR", rc, stdout, stderr)
	}
	if got, _ := os.ReadFile(state); string(got) != faultBase {
		t.Errorf("previous state changed:\n%s", got)
	}
	// A reader needs no lock.
	if rc, stdout, _ := runCLI(t, "read", "--state", state); rc != 0 || !strings.HasPrefix(stdout, "OK\n") {
		t.Errorf("read with the lock path blocked: %q", stdout)
	}
	os.Remove(state + ".lock")
	assertNextCallSucceeds(t, state)
}

// withState inserts --state PATH after the subcommand.
func withState(args []string, state string) []string {
	return append([]string{args[0], "--state", state}, args[1:]...)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// assertNextCallSucceeds: after the fault, a normal mutating call works
// and the file reads.
func assertNextCallSucceeds(t *testing.T, state string) {
	t.Helper()
	next := []string{"upsert-item", "--state", state, "--source", "s", "--id", "3", "--json", `{"status": "ingested"}`, "--writer", "w1", "--now", "2026-07-02T12:06:00Z"}
	if rc, stdout, stderr := runCLI(t, next...); rc != 0 || stdout != "OK\n" {
		t.Fatalf("next call after the fault: exit %d %q %q", rc, stdout, stderr)
	}
	if rc, stdout, _ := runCLI(t, "read", "--state", state); rc != 0 || !strings.Contains(stdout, `"s:3"`) {
		t.Fatalf("read after the next call: %q", stdout)
	}
}
