package depcheck

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// The proof that a ledger on a file opens no socket, at the system call
// level: the binary as the README installs it runs every command on a file
// ledger under a seccomp filter that kills the process at its first
// socket(2) or connect(2). Linking network code (as the PostgreSQL engine's
// driver does) cannot fail this test; calling it on a file ledger does.
//
// The filter is installed by this test binary run as a child (the
// environment variable below says which program to become), which then
// execs the command: a seccomp filter outlives execve once no_new_privs is
// set, so the command runs, from its first instruction, under it.
const (
	execUnderFilterEnv = "STATEGUARD_DEPCHECK_EXEC_WITHOUT_SOCKETS"
	openSocketEnv      = "STATEGUARD_DEPCHECK_OPEN_SOCKET"
)

func init() {
	if prog := os.Getenv(execUnderFilterEnv); prog != "" {
		if err := forbidSockets(); err != nil {
			fmt.Fprintf(os.Stderr, "installing the seccomp filter: %v\n", err)
			os.Exit(97)
		}
		args := os.Args[1:]
		env := make([]string, 0, len(os.Environ()))
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, execUnderFilterEnv) {
				env = append(env, kv)
			}
		}
		err := syscall.Exec(prog, append([]string{prog}, args...), env)
		fmt.Fprintf(os.Stderr, "exec: %v\n", err)
		os.Exit(98)
	}
	if os.Getenv(openSocketEnv) != "" {
		// The filter's own check: what a program that does open a socket
		// meets under it.
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		fmt.Fprintf(os.Stderr, "socket: fd %d, %v\n", fd, err)
		os.Exit(0)
	}
}

// auditArch is the architecture word the filter checks first: a system
// call made through another ABI (i386's int 0x80 on amd64) has other
// numbers, and is killed rather than misread.
func auditArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// forbidSockets installs, on every thread of this process and for every
// program it execs, a filter that kills the process on socket(2) or
// connect(2) and allows every other call.
func forbidSockets() error {
	arch, ok := auditArch()
	if !ok {
		return errors.New("no filter for this architecture")
	}
	const (
		nrOffset   = 0 // struct seccomp_data: int nr; __u32 arch; ...
		archOffset = 4
	)
	kill := unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_KILL_PROCESS}
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: archOffset},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, Jf: 0, K: arch},
		kill,
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: nrOffset},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 2, Jf: 0, K: unix.SYS_SOCKET},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, Jf: 0, K: unix.SYS_CONNECT},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		kill,
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}

// runWithoutSockets runs prog with args under the filter and returns its
// combined output and how it ended.
func runWithoutSockets(t *testing.T, dir, prog string, extraEnv []string, args ...string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The arguments travel as the child's own: its init takes them
	// before the testing package reads any flag.
	cmd := exec.Command(self, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), execUnderFilterEnv+"="+prog)
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// killedBySIGSYS says whether the filter killed the program.
func killedBySIGSYS(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGSYS
}

// TestSocketFilterKills proves the filter bites: a program that opens a
// socket after the exec is killed by SIGSYS, and one that does not runs to
// its end.
func TestSocketFilterKills(t *testing.T) {
	if _, ok := auditArch(); !ok {
		t.Skip("the seccomp filter is written for amd64 and arm64")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runWithoutSockets(t, t.TempDir(), self, []string{openSocketEnv + "=1"})
	if !killedBySIGSYS(err) {
		t.Fatalf("a program opening a socket under the filter was not killed by SIGSYS: %v\n%s", err, out)
	}
	out, err = runWithoutSockets(t, t.TempDir(), self, nil, "-test.run=^$")
	if err != nil {
		t.Fatalf("a program opening no socket failed under the filter: %v\n%s", err, out)
	}
}

// TestFileLedgerOpensNoSocket runs task-state-guard, built as the README
// installs it, through every command on a file ledger under the filter:
// each must end by itself, with the exit code the command gives; so must
// the demo, which drives the command line on file ledgers. The same binary
// given a postgres:// --db is killed by the filter: it links the driver,
// and the filter sees it try.
func TestFileLedgerOpensNoSocket(t *testing.T) {
	platformtest.GoCommand(t)
	if testing.Short() {
		t.Skip("builds binaries")
	}
	if _, ok := auditArch(); !ok {
		t.Skip("the seccomp filter is written for amd64 and arm64")
	}
	var bin, demo string
	for _, b := range buildCommands(t, "0", "./cmd/task-state-guard", "./cmd/stateguard-demo") {
		switch filepath.Base(b) {
		case "task-state-guard":
			bin = b
		case "stateguard-demo":
			demo = b
		}
	}
	if bin == "" || demo == "" {
		t.Fatal("the build made no task-state-guard or no stateguard-demo")
	}
	work := t.TempDir()
	db := filepath.Join(work, "ledger.db")
	const id = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	env := []string{"TASK_STATE_GUARD_TEST_CLOCK=2026-01-02T03:04:05+00:00"}
	steps := [][]string{
		{"init"},
		{"create", "--task-id", id, "--timeout-seconds", "60"},
		{"start", id},
		{"heartbeat", id},
		{"get", id},
		{"children", id},
		{"history", id},
		{"list"},
		{"reconcile", "--dry-run"},
		{"close", id, "--status", "succeeded"},
		{"delivery", id, "--status", "delivered"},
		{"reconcile"},
		{"doctor"},
		{"metrics"},
		{"metrics", "--to", filepath.Join(work, "ledger.prom")},
		{"backup", "--to", filepath.Join(work, "copy.db")},
		{"prune", "--ended-before", "1900000000", "--dry-run"},
		{"prune", "--ended-before", "1900000000"},
		{"restore", "--from", filepath.Join(work, "copy.db")},
		{"doctor"},
		{"--version"},
		{"--help"},
	}
	for _, step := range steps {
		args := append([]string{"--db", db}, step...)
		if strings.HasPrefix(step[0], "--") {
			args = step
		}
		out, err := runWithoutSockets(t, work, bin, env, args...)
		if killedBySIGSYS(err) {
			t.Errorf("%s on a file ledger opened a socket (killed by the filter)", step[0])
			continue
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", step[0], err, out)
		}
	}
	if out, err := runWithoutSockets(t, work, demo, nil); err != nil {
		if killedBySIGSYS(err) {
			t.Errorf("the demo opened a socket (killed by the filter)")
		} else {
			t.Errorf("the demo: %v\n%s", err, out)
		}
	}
	// The filter's check on this very binary: a server's URL (a socket
	// directory where nothing listens) makes it try, and it is killed.
	url := "postgres:///jobs?host=" + filepath.Join(work, "no-server") + "&user=worker"
	out, err := runWithoutSockets(t, work, bin, env, "--db", url, "doctor")
	if !killedBySIGSYS(err) {
		t.Errorf("task-state-guard on a postgres:// URL was not killed by the filter: %v\n%s", err, out)
	}
}
