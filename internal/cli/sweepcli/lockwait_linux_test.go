//go:build linux

package sweepcli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
)

// TestEveryMutatingSubcommandWaitsForTheLock (merge included, on its
// --ours) is the deterministic half of
// the race test: the test holds the flock on <state>.lock itself, starts
// one mutating subcommand, and waits until the process is seen blocked in
// the kernel's lock wait (Linux: a thread's wchan) or exits. Exiting while
// the lock is held fails. Still holding the lock, the test then replaces
// the file with one that has an extra item; after the release the
// subcommand must have worked on that file: the extra item survives (and
// validate downgrades it).
func TestEveryMutatingSubcommandWaitsForTheLock(t *testing.T) {
	const now = "2026-07-02T12:00:00Z"
	const before = "schema_version: 1\nlease:\n  writer: \"sweep\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: 60\n" +
		"sources: {}\nitems:\n  \"s:1\":\n    source: \"s\"\n    status: \"ingested\"\n    id: \"1\"\n"
	const during = "schema_version: 1\nlease:\n  writer: \"sweep\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: 60\n" +
		"sources: {}\nitems:\n  \"held:1\":\n    source: \"held\"\n    status: \"closed\"\n    id: \"1\"\n" +
		"  \"s:1\":\n    source: \"s\"\n    status: \"ingested\"\n    id: \"1\"\n"
	dir := t.TempDir()
	legacy := filepath.Join(dir, "legacy.json")
	if err := os.WriteFile(legacy, []byte(`{"items": [{"id": "imp", "status": "ingested"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "base.yml")
	theirs := filepath.Join(dir, "theirs.yml")
	if err := os.WriteFile(base, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(theirs, []byte(before+"  \"t:1\":\n    source: \"t\"\n    id: \"1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"validate"},
		{"upsert-item", "--source", "s", "--id", "2", "--json", `{"status": "ingested"}`, "--writer", "sweep", "--now", now},
		{"cursor-advance", "--source", "s", "--to", "5", "--past-item", "1", "--writer", "sweep", "--now", now},
		{"lease-acquire", "--writer", "sweep", "--now", now},
		{"lease-release", "--writer", "sweep"},
		{"run-record", "--writer", "sweep", "--outcome", "completed", "--counts", "{}", "--timestamp", now},
		{"import-legacy", "--file", legacy},
		// merge names its state --ours (the file it writes).
		{"merge", "--base", base, "--theirs", theirs, "--published", "theirs"},
	} {
		t.Run(args[0], func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.yml")
			if err := os.WriteFile(state, []byte(before), 0o600); err != nil {
				t.Fatal(err)
			}
			lockFD, err := unix.Open(state+".lock", unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(lockFD)
			if err := unix.Flock(lockFD, unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			stateFlag := "--state"
			if args[0] == "merge" {
				stateFlag = "--ours"
			}
			cmd := exec.Command(binPath, append([]string{args[0], stateFlag, state}, args[1:]...)...)
			var out strings.Builder
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			if !waitUntilBlockedInLock(t, cmd.Process.Pid, exited) {
				t.Fatalf("%s finished while another process held the lock: it did not wait for it (answer %q)", args[0], out.String())
			}
			tmp := state + ".test-tmp"
			if err := os.WriteFile(tmp, []byte(during), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, state); err != nil {
				t.Fatal(err)
			}
			unix.Flock(lockFD, unix.LOCK_UN)
			if err := <-exited; err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out.String(), "OK\n") {
				t.Fatalf("answer %q", out.String())
			}
			data, _ := os.ReadFile(state)
			doc, err := yamlsubset.Parse(data)
			if err != nil {
				t.Fatalf("file does not parse: %v\n%s", err, data)
			}
			held := mapAt(mapAt(doc, "items"), "held:1")
			if held.Len() == 0 {
				t.Fatalf("the change made while the lock was held is gone: %s worked on a stale load\n%s", args[0], data)
			}
			if st, _ := held.Get("status"); args[0] == "validate" && st != "fix_pending" {
				t.Errorf("validate did not see the item added under the lock: status %v", st)
			}
		})
	}
}

// waitUntilBlockedInLock polls until a thread of process pid waits in
// flock(2) (its current system call, or its kernel wait channel, says so)
// or the process exits (false). Polling waits for a condition; it is not a
// sleep standing in for one.
func waitUntilBlockedInLock(t *testing.T, pid int, exited <-chan error) bool {
	flockNr := fmt.Sprint(unix.SYS_FLOCK) + " "
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		threads, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
		for _, th := range threads {
			sc, _ := os.ReadFile(th + "/syscall")
			wchan, _ := os.ReadFile(th + "/wchan")
			if strings.HasPrefix(string(sc), flockNr) || strings.Contains(string(wchan), "lock_inode_wait") {
				return true
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the process neither exited nor waited for the lock within 30 s")
	return false
}
