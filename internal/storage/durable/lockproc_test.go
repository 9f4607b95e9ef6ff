//go:build unix || windows

package durable

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// lockHolderEnv makes this test binary a child that holds the lock named
// by the variable until its standard input closes.
const lockHolderEnv = "DURABLE_TEST_HOLD_LOCK"

func TestMain(m *testing.M) {
	if p := os.Getenv(lockHolderEnv); p != "" {
		os.Exit(holdLock(p))
	}
	os.Exit(m.Run())
}

func holdLock(p string) int {
	l, err := Acquire(p)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("held")
	// Wait for the parent to close our standard input.
	bufio.NewReader(os.Stdin).ReadString('\n')
	if err := l.Unlock(); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// TestLockExcludesOtherProcesses: the writer lock (flock on POSIX,
// LockFileEx on Windows) held by one process keeps another process from
// taking it until the holder releases it, which is what serialises the
// sweep's writers. The child is this test binary; it says "held" once it
// holds the lock, and the parent's non-blocking attempts decide, so no
// timing is involved. Broken on purpose by making Windows' Acquire skip
// LockFileEx (and flock on POSIX): the first attempt then succeeds.
func TestLockExcludesOtherProcesses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yml.lock")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var child *exec.Cmd
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	err = platformtest.RetryWineStart(t, func() (err error) {
		child = exec.Command(exe, "-test.run=^$")
		child.Env = append(os.Environ(), lockHolderEnv+"="+p)
		if stdin, err = child.StdinPipe(); err != nil {
			return err
		}
		if stdout, err = child.StdoutPipe(); err != nil {
			return err
		}
		return child.Start()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		child.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "held\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	mine, err := openLock(p)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.close()
	if held, err := mine.tryLock(); err != nil || held {
		t.Fatalf("lock taken while another process holds it: held=%v err=%v", held, err)
	}
	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if held, err := mine.tryLock(); err != nil || !held {
		t.Fatalf("lock not taken after the other process released it: held=%v err=%v", held, err)
	}
	if err := mine.Unlock(); err != nil {
		t.Fatal(err)
	}
}
