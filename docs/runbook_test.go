package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// shellBlocks returns the ```sh blocks of a page, in order (```console
// blocks hold commands the reader adapts, and are not run).
func shellBlocks(text string) []string {
	var blocks []string
	var current []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !in && line == "```sh":
			in, current = true, nil
		case in && line == "```":
			in = false
			blocks = append(blocks, strings.Join(current, "\n")+"\n")
		case in:
			current = append(current, line)
		}
	}
	return blocks
}

// TestRunbookBlocksRun runs every ```sh block of switching.md, in order, in
// one directory, with this project's binaries as both the old and the new
// tools, on a state file and a ledger written first: each block must exit
// 0 and say so on its last line. A block whose flags or subcommands no
// longer exist, or whose comparison no longer holds on identical tools,
// fails here.
func TestRunbookBlocksRun(t *testing.T) {
	platformtest.GoCommand(t)
	if platformtest.Windows {
		t.Skip("the runbook's blocks are POSIX shell")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no bash to run the runbook's blocks")
		}
		t.Skip("no bash")
	}
	text, err := os.ReadFile("switching.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shellBlocks(string(text))
	if len(blocks) != 3 {
		t.Fatalf("switching.md has %d sh blocks; this test knows 3 (the sweep and ledger shadow checks, the rollback check)", len(blocks))
	}
	bin := t.TempDir()
	sweep, err := platformtest.CommandBinary(bin, "sweep-state")
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := platformtest.CommandBinary(bin, "task-state-guard")
	if err != nil {
		t.Fatal(err)
	}

	// The live files: a state file with a lease and an item, a ledger with
	// a finished task whose delivery is pending and a running one, times
	// in 2001 so that the real clock's dry runs count them the same way
	// whenever the test runs.
	live := t.TempDir()
	state := filepath.Join(live, "state.yml")
	db := filepath.Join(live, "ledger", "tasks.sqlite")
	if err := os.Mkdir(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	setup := [][]string{
		{sweep, "lease-acquire", "--state", state, "--writer", "w1", "--now", "2026-07-02T12:00:00Z"},
		{sweep, "upsert-item", "--state", state, "--source", "mail", "--id", "a1", "--json", `{"title": "t", "status": "closed"}`, "--writer", "w1", "--now", "2026-07-02T12:01:00Z"},
		{ledger, "--db", db, "create", "--task-id", "7a5c0001-0000-4000-8000-000000000001", "--timeout-seconds", "900"},
		{ledger, "--db", db, "start", "7a5c0001-0000-4000-8000-000000000001"},
		{ledger, "--db", db, "create", "--task-id", "7a5c0002-0000-4000-8000-000000000002"},
		{ledger, "--db", db, "close", "7a5c0002-0000-4000-8000-000000000002", "--status", "cancelled"},
	}
	for _, args := range setup {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "TASK_STATE_GUARD_TEST_CLOCK=1", "TASK_STATE_GUARD_TEST_NOW=978307200")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("setup %v: %v\n%s", args[1:], err, out)
		}
	}

	work := t.TempDir()
	env := append(os.Environ(), "OLD_SWEEP="+sweep, "NEW_SWEEP="+sweep, "OLD_LEDGER="+ledger, "NEW_LEDGER="+ledger,
		"LIVE_STATE="+state, "LIVE_LEDGER="+db, "TASK_STATE_GUARD_TEST_CLOCK=")
	for i, block := range blocks {
		cmd := exec.Command(bash, "-c", block)
		cmd.Dir = work
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if err != nil || stderr.Len() > 0 || len(lines) != 1 || lines[0] == "" {
			t.Errorf("block %d: %v\nstdout:\n%s\nstderr:\n%s\nblock:\n%s", i+1, err, stdout.String(), stderr.String(), block)
		}
	}
}
