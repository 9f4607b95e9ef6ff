package ledgercli_test

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// runBinary runs the real binary (a separate process, so SQLite's POSIX
// locks of this test process count against it) with the explain phrase on.
func runBinary(t *testing.T, args ...string) (rc int, stdout, stderr string) {
	t.Helper()
	bin := ledgerBinary(t)
	var out, errb bytes.Buffer
	err := platformtest.RetryWineStart(t, func() error {
		cmd := exec.Command(bin, platformtest.ACLArgs(args...)...)
		cmd.Env = append(os.Environ(), ledgercli.ExplainEnv+"=1")
		cmd.Stdout, cmd.Stderr = &out, &errb
		return cmd.Run()
	})
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		rc = exitErr.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return rc, out.String(), errb.String()
}

// TestL11BusyPastTheTimeoutIsStateConflict: a writer that waits past the
// 5 s busy timeout answers StateConflict, exit 2, reason "database is busy"
// (the reference lets SQLite's "database is locked" escape: InternalError,
// exit 3). A caller may retry a busy answer; spec L11.
func TestL11BusyPastTheTimeoutIsStateConflict(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("holds a POSIX lock from this process (the Windows locking is SQLite's own)")
	}
	db := filepath.Join(t.TempDir(), "l", "tasks.sqlite")
	if rc, out, _ := runBinary(t, "--db", db, "init"); rc != 0 {
		t.Fatalf("init: %d %s", rc, out)
	}
	holder, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	holder.SetMaxOpenConns(1)
	if _, err := holder.Exec("BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rc, out, stderr := runBinary(t, "--db", db, "create")
	waited := time.Since(start)
	if rc != 2 || out != "{\"error\":\"StateConflict\",\"ok\":false}\n" || stderr != "task-state-guard: StateConflict: database is busy\n" {
		t.Fatalf("create behind a held write lock: exit %d, stdout %q, stderr %q", rc, out, stderr)
	}
	if waited < 5*time.Second {
		t.Errorf("answered busy after %v, inside the 5 s busy timeout", waited)
	}
	if _, err := holder.Exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if rc, out, _ := runBinary(t, "--db", db, "create"); rc != 0 {
		t.Errorf("create after the lock was let go: %d %s", rc, out)
	}
}

// TestL12LoneEmptyWALIsRead: the read-only commands read a ledger beside an
// empty -wal with no -shm (the state a crash leaves) as the ledger it is:
// doctor healthy, dry run ok. The reference's dry run answers StateConflict
// there; spec L12.
func TestL12LoneEmptyWALIsRead(t *testing.T) {
	db := platformtest.LedgerParent(t, filepath.Join(t.TempDir(), "l", "tasks.sqlite"))
	if rc, out, _ := runBinary(t, "--db", db, "create"); rc != 0 {
		t.Fatalf("create: %d %s", rc, out)
	}
	os.Remove(db + "-shm")
	if err := os.WriteFile(db+"-wal", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if rc, out, stderr := runBinary(t, "--db", db, "reconcile", "--dry-run"); rc != 0 || !bytes.Contains([]byte(out), []byte(`"ok":true,"reconcile":{`)) || !bytes.Contains([]byte(out), []byte(`"dry_run":true`)) {
		t.Errorf("dry run: exit %d, stdout %q, stderr %q", rc, out, stderr)
	}
	if rc, out, _ := runBinary(t, "--db", db, "doctor"); rc != 0 || !bytes.Contains([]byte(out), []byte(`"healthy":true`)) {
		t.Errorf("doctor: exit %d, stdout %q", rc, out)
	}
	if _, err := os.Stat(db + "-shm"); err == nil {
		t.Errorf("a read-only command made a -shm")
	}
}
