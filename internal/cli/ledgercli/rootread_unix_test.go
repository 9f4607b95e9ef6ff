//go:build linux || darwin

package ledgercli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The read-only commands run by root on a ledger another user owns
// answer; every command that writes is refused with the owner rule and
// changes nothing.
func TestRootRunsReadOnlyCommandsOnAnotherUsersLedger(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root (CI runs as root) to give a ledger to another user")
		}
		t.Skip("needs root to give a ledger to another user")
	}
	const id = "7a5c0001-0000-4000-8000-000000000001"
	dir := filepath.Join(t.TempDir(), "worker")
	db := filepath.Join(dir, "tasks.sqlite")
	getenv := func(k string) string {
		switch k {
		case TestClockEnv:
			return "1"
		case TestNowEnv:
			return "978307200"
		}
		return ""
	}
	cli := func(args ...string) (string, int) {
		var out bytes.Buffer
		status := run(append([]string{"--db", db}, args...), &out, getenv)
		return out.String(), status
	}
	if out, status := cli("create", "--task-id", id); status != 0 {
		t.Fatal(out)
	}
	if out, status := cli("start", id); status != 0 {
		t.Fatal(out)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.Lchown(filepath.Join(dir, e.Name()), 65534, 65534)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		var b strings.Builder
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			fi, _ := os.Lstat(filepath.Join(dir, e.Name()))
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			b.WriteString(e.Name() + " " + fi.Mode().String() + " " + string(data) + "\n")
		}
		return b.String()
	}
	before := snapshot()
	for _, args := range [][]string{
		{"doctor"}, {"metrics"}, {"get", id}, {"list"}, {"children", id}, {"history", id},
		{"reconcile", "--dry-run"}, {"prune", "--ended-before", "1", "--dry-run"},
	} {
		if out, status := cli(args...); status != 0 || strings.Contains(out, `"ok":false`) {
			t.Errorf("%v: exit %d: %s", args, status, out)
		}
	}
	for _, args := range [][]string{
		{"init"}, {"create"}, {"heartbeat", id}, {"close", id, "--status", "failed"},
		{"reconcile"}, {"prune", "--ended-before", "1"},
	} {
		if out, status := cli(args...); status != exitClassed || out != "{\"error\":\"InvalidInput\",\"ok\":false}\n" {
			t.Errorf("%v: exit %d: %s", args, status, out)
		}
	}
	if after := snapshot(); after != before {
		t.Fatal("root's commands changed the other user's directory")
	}
}
