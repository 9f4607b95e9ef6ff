//go:build unix

package sweepcli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the user a root test run drops to, so that permission bits
// bite (root bypasses them).
const nobody = 65534

// faultDir makes a directory with the base state file for a process that
// the test will run through cliAs: when the test runs as root, the
// directory and file belong to nobody and the directories above it become
// traversable, because the calls will run as nobody.
func faultDir(t *testing.T) (dir, state string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	state = filepath.Join(dir, "state.yml")
	if err := os.WriteFile(state, []byte(faultBase), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// nobody must reach the binary too.
		os.Chmod(filepath.Dir(binPath), 0o711)
		for p := root; p != "/" && p != "."; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o011 == 0 {
				os.Chmod(p, fi.Mode().Perm()|0o011)
			}
		}
		for _, p := range []string{dir, state} {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir, state
}

// cliAs runs the sweep-state binary, as nobody when the test is root.
func cliAs(t *testing.T, wrap []string, args ...string) (stdout, stderr string) {
	t.Helper()
	argv := append(append(wrap, binPath), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q: %v (stderr %q)", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// afterFault checks the previous state is intact and readable, then that
// the next normal call succeeds (all as the file's owner).
func afterFault(t *testing.T, dir, state string) {
	t.Helper()
	if got, _ := os.ReadFile(state); string(got) != faultBase {
		t.Fatalf("previous state changed:\n%s", got)
	}
	if out, _ := cliAs(t, nil, "read", "--state", state); !strings.HasPrefix(out, "OK\n") || !strings.Contains(out, `"s:1"`) {
		t.Fatalf("read after the fault: %q", out)
	}
	assertNoTemp(t, dir)
	next := []string{"upsert-item", "--state", state, "--source", "s", "--id", "3", "--json", `{"status": "ingested"}`, "--writer", "w1", "--now", "2026-07-02T12:06:00Z"}
	if out, errs := cliAs(t, nil, next...); out != "OK\n" {
		t.Fatalf("next call after the fault: %q %q", out, errs)
	}
}

// TestDiskFullAnswersError: a write that runs out of room part way (a
// child with RLIMIT_FSIZE set through prlimit(1); Go programs ignore
// SIGXFSZ, so the write fails with EFBIG as on a full disk) answers ERROR,
// keeps the previous state and leaves no temporary file.
func TestDiskFullAnswersError(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit(1) not installed: cannot limit a child's file size")
	}
	dir, state := faultDir(t)
	big := `{"status": "ingested", "body": "` + strings.Repeat("x", 64<<10) + `"}`
	out, errs := cliAs(t, []string{prlimit, "--fsize=8192"}, "upsert-item", "--state", state, "--source", "s", "--id", "2",
		"--json", big, "--writer", "w1", "--now", "2026-07-02T12:05:00Z")
	if out != "ERROR\n" || !strings.Contains(errs, "cannot write the state file") {
		t.Fatalf("stdout %q stderr %q, want ERROR", out, errs)
	}
	afterFault(t, dir, state)
}

// TestReadOnlyDirectoryAnswersError: in a directory the caller cannot
// write, a mutating call answers ERROR (no lock file can be created, or,
// with the lock file already there, no temporary file) and a read still
// answers OK.
func TestReadOnlyDirectoryAnswersError(t *testing.T) {
	for _, lockExists := range []bool{false, true} {
		name := map[bool]string{false: "no lock file", true: "lock file present"}[lockExists]
		t.Run(name, func(t *testing.T) {
			dir, state := faultDir(t)
			if lockExists {
				if out, _ := cliAs(t, nil, "validate", "--state", state); !strings.HasPrefix(out, "OK\n") {
					t.Fatalf("validate: %q", out)
				}
			}
			if err := os.Chmod(dir, 0o500); err != nil {
				t.Fatal(err)
			}
			out, errs := cliAs(t, nil, withState(faultUpsert, state)...)
			if out != "ERROR\n" || !strings.Contains(errs, "cannot") {
				t.Fatalf("stdout %q stderr %q, want ERROR", out, errs)
			}
			if out, _ := cliAs(t, nil, "read", "--state", state); !strings.HasPrefix(out, "OK\n") {
				t.Errorf("read in a read-only directory: %q", out)
			}
			os.Chmod(dir, 0o700)
			afterFault(t, dir, state)
		})
	}
}

// TestUnreadableStateFileIsCorrupt: a state file the caller cannot read is
// CORRUPT (spec/sweep-state.md §13.3) for readers and writers alike, and is never
// written over.
func TestUnreadableStateFileIsCorrupt(t *testing.T) {
	dir, state := faultDir(t)
	if err := os.Chmod(state, 0o000); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"read", "--state", state}, withState(faultUpsert, state), {"validate", "--state", state}} {
		if out, errs := cliAs(t, nil, args...); out != "CORRUPT\n" {
			t.Errorf("%s on an unreadable file: %q %q, want CORRUPT", args[0], out, errs)
		}
	}
	os.Chmod(state, 0o600)
	afterFault(t, dir, state)
}
