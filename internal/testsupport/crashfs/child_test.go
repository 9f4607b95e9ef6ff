//go:build linux

package crashfs_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"modernc.org/sqlite"
)

// childEnv makes the test binary, started again, a child that uses the Go
// API on the mount instead of running tests. SQLite maps the -shm, and a
// page fault on a mapping served by the faulting process itself cannot be
// preempted: a garbage collection's stop-the-world would wait for it while
// the server's goroutines wait for the collection. So the test process
// never opens a ledger on its own mount.
const childEnv = "CRASHFS_TEST_CHILD"

// child runs the child named by childEnv ("hold DB" or "fsync DB") and
// returns its exit status. It talks line by line on stdin and stdout.
func child(spec string) int {
	mode, db, _ := strings.Cut(spec, " ")
	in := bufio.NewReader(os.Stdin)
	now := time.Unix(1_700_000_100, 0)
	l, err := ledger.Open(db, ledger.Options{Clock: func() time.Time { return now }})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	defer l.Close()
	switch mode {
	case "hold":
		// Holds the ledger open until stdin closes.
		fmt.Println("ready")
		io.Copy(io.Discard, in)
	case "fsync":
		// Creates A, then, told to, C (with a fault armed by the parent),
		// reports the error, and, told to, gets and creates C again.
		if _, err := l.Create(ledger.CreateParams{TaskID: taskA}); err != nil {
			fmt.Println("create A:", err)
			return 1
		}
		fmt.Println("ready")
		in.ReadString('\n')
		_, err := l.Create(ledger.CreateParams{TaskID: taskC})
		var se *sqlite.Error
		code := 0
		if errors.As(err, &se) {
			code = se.Code()
		}
		classed := errors.Is(err, ledger.ErrInvalidInput) || errors.Is(err, ledger.ErrStateConflict) || errors.Is(err, ledger.ErrTaskNotFound)
		fmt.Printf("code %d classed %v\n", code, classed)
		in.ReadString('\n')
		_, gerr := l.Get(taskC)
		_, cerr := l.Create(ledger.CreateParams{TaskID: taskC})
		fmt.Printf("get not found %v, again %v\n", errors.Is(gerr, ledger.ErrTaskNotFound), cerr)
	default:
		fmt.Println("unknown child", mode)
		return 2
	}
	return 0
}

// startChild starts a child, waits for its "ready" line and returns a
// function that sends a line and reads the answer line. The child ends
// when the test does (stdin closed, then waited for; Pdeathsig if the
// test process dies).
func startChild(t *testing.T, spec string) func(line string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %q: %v", spec, err)
		}
	})
	out := bufio.NewReader(stdout)
	if line, _ := out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("child %q: %q", spec, line)
	}
	return func(line string) string {
		if line != "" {
			io.WriteString(stdin, line+"\n")
		}
		got, _ := out.ReadString('\n')
		return strings.TrimSpace(got)
	}
}
