//go:build unix

package ledgercli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
)

// nobody is the user a root test run drops to, so that permission bits
// bite (root bypasses them).
const nobody = 65534

// faultLedger is a ledger holding one task, in a directory of its own that
// belongs to the user the calls run as (nobody when the test is root).
type faultLedger struct {
	t         *testing.T
	bin, dir  string
	db        string
	taskA     string // the previous state: get of task A
	wrap      []string
	nextID    int
	asNobody  bool
	clockNext float64
}

func newFaultLedger(t *testing.T) *faultLedger {
	t.Helper()
	root := t.TempDir()
	f := &faultLedger{t: t, bin: ledgerBinary(t), dir: filepath.Join(root, "d"), asNobody: os.Geteuid() == 0, clockNext: 1000}
	f.db = filepath.Join(f.dir, "ledger.sqlite")
	if err := os.Mkdir(f.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if f.asNobody {
		for p := root; p != "/" && p != "."; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o011 == 0 {
				os.Chmod(p, fi.Mode().Perm()|0o011)
			}
		}
		if err := os.Chown(f.dir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if out, rc := f.run("create", "--task-id", poolID(1)); rc != 0 {
		t.Fatalf("create: %s", out)
	}
	f.taskA, _ = f.run("get", poolID(1))
	return f
}

// run runs one call with the next clock tick, as nobody when root.
func (f *faultLedger) run(args ...string) (string, int) {
	f.t.Helper()
	argv := append(append(append([]string(nil), f.wrap...), f.bin, "--db", f.db), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	f.clockNext++
	cmd.Env = append(os.Environ(), ledgercli.TestClockEnv+"=1", fmt.Sprintf("%s=%g", ledgercli.TestNowEnv, f.clockNext))
	if f.asNobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		f.t.Fatalf("%q: %v", args, err)
	}
	return string(out), 0
}

// intact: the previous state reads back unchanged through the read-only
// commands and the doctor is healthy.
func (f *faultLedger) intact() {
	f.t.Helper()
	if out, _ := f.run("get", poolID(1)); out != f.taskA {
		f.t.Fatalf("previous state changed: get answers %s, was %s", out, f.taskA)
	}
	out, rc := f.run("doctor")
	var report struct{ Healthy bool }
	if json.Unmarshal([]byte(out), &report); rc != 0 || !report.Healthy {
		f.t.Fatalf("doctor after the fault: %s (exit %d)", out, rc)
	}
}

// nextSucceeds: a normal call works and is visible.
func (f *faultLedger) nextSucceeds() {
	f.t.Helper()
	id := poolID(100 + f.nextID)
	f.nextID++
	if out, rc := f.run("create", "--task-id", id); rc != 0 {
		f.t.Fatalf("next call after the fault: %s", out)
	}
	if out, rc := f.run("get", id); rc != 0 {
		f.t.Fatalf("get after the next call: %s", out)
	}
	f.intact()
}

func wantClass(t *testing.T, what, out string, rc int, class string, status int) {
	t.Helper()
	if want := fmt.Sprintf(`{"error":%q,"ok":false}`+"\n", class); out != want || rc != status {
		t.Errorf("%s: %q (exit %d), want %q (exit %d)", what, out, rc, want, status)
	}
}

// TestLedgerDiskFull: writes that run out of room (a child with
// RLIMIT_FSIZE set through prlimit(1); Go ignores SIGXFSZ, so writes fail
// with EFBIG as on a full disk) answer InternalError (exit 3) or, when the
// commit reached the WAL before the limit bit (a checkpoint at close may
// fail quietly), ok. Either way the answer is the truth: an ok task is
// there, a refused one is not, nothing else changed, and the next call
// without the limit succeeds. The limits step from below the size of the
// shared-memory index (refused at open) to inside the WAL (refused in the
// middle of appending the transaction's frames).
func TestLedgerDiskFull(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit(1) not installed: cannot limit a child's file size")
	}
	f := newFaultLedger(t)
	refused := 0
	for i, limit := range []int{2000, 36000, 30000, 31000, 33000} {
		f.wrap = []string{prlimit, fmt.Sprintf("--fsize=%d", limit)}
		id := poolID(10 + i)
		out, rc := f.run("create", "--task-id", id)
		f.wrap = nil
		t.Logf("RLIMIT_FSIZE %d: create answered %s", limit, strings.TrimSpace(out[:min(len(out), 40)]))
		got, grc := f.run("get", id)
		switch rc {
		case 0:
			if got != out || grc != 0 {
				t.Errorf("limit %d: create answered ok but get answers %s", limit, got)
			}
		case 3:
			refused++
			wantClass(t, fmt.Sprintf("limit %d: create", limit), out, rc, "InternalError", 3)
			wantClass(t, fmt.Sprintf("limit %d: get of the refused task", limit), got, grc, "TaskNotFound", 2)
		default:
			t.Errorf("limit %d: create answered %s (exit %d)", limit, out, rc)
		}
		f.intact()
	}
	if refused < 2 {
		t.Errorf("only %d of the limited writes failed: the test no longer reaches a full disk", refused)
	}
	f.nextSucceeds()
}

// TestLedgerReadOnlyDirectory: in a directory the caller cannot write, a
// writer is refused with StateConflict (SQLite cannot create its WAL),
// while doctor, get and the dry run still answer; afterwards the next call
// succeeds.
func TestLedgerReadOnlyDirectory(t *testing.T) {
	f := newFaultLedger(t)
	if err := os.Chmod(f.dir, 0o500); err != nil {
		t.Fatal(err)
	}
	out, rc := f.run("create", "--task-id", poolID(2))
	wantClass(t, "create in a read-only directory", out, rc, "StateConflict", 2)
	f.intact()
	if out, rc := f.run("reconcile", "--dry-run"); rc != 0 || !strings.Contains(out, `"dry_run":true`) {
		t.Errorf("dry run in a read-only directory: %s", out)
	}
	os.Chmod(f.dir, 0o700)
	f.nextSucceeds()
}

// TestLedgerUnreadableDatabase: a database file the caller cannot read is
// refused by every command with InvalidInput (the storage guard's answer
// to a file whose mode is not private), and it is neither written nor
// re-permissioned.
func TestLedgerUnreadableDatabase(t *testing.T) {
	f := newFaultLedger(t)
	before, _ := os.ReadFile(f.db)
	if err := os.Chmod(f.db, 0o000); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"doctor"}, {"get", poolID(1)}, {"reconcile", "--dry-run"}, {"create", "--task-id", poolID(2)}} {
		out, rc := f.run(args...)
		wantClass(t, args[0]+" on an unreadable database", out, rc, "InvalidInput", 2)
	}
	fi, _ := os.Stat(f.db)
	after, _ := os.ReadFile(f.db)
	if fi.Mode().Perm() != 0 || !bytes.Equal(before, after) {
		t.Errorf("the refused database was touched: mode %v, bytes equal %v", fi.Mode().Perm(), bytes.Equal(before, after))
	}
	os.Chmod(f.db, 0o600)
	f.intact()
	f.nextSucceeds()
}

// TestLedgerSidecarCannotBeCreated: when SQLite's lock and log files
// (-shm, -wal) cannot be created because something else sits at their
// path, every command is refused with InvalidInput and nothing changes.
func TestLedgerSidecarCannotBeCreated(t *testing.T) {
	for _, sidecar := range []string{"-shm", "-wal"} {
		t.Run(sidecar, func(t *testing.T) {
			f := newFaultLedger(t)
			blocker := f.db + sidecar
			if err := os.Mkdir(blocker, 0o700); err != nil {
				t.Fatal(err)
			}
			if f.asNobody {
				os.Chown(blocker, nobody, nobody)
			}
			for _, args := range [][]string{{"doctor"}, {"get", poolID(1)}, {"create", "--task-id", poolID(2)}} {
				out, rc := f.run(args...)
				wantClass(t, args[0]+" with "+sidecar+" blocked", out, rc, "InvalidInput", 2)
			}
			os.Remove(blocker)
			f.intact()
			f.nextSucceeds()
		})
	}
}
