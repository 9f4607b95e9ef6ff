package ledgercli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// startRaces is how many fresh ledgers each case of
// TestFreshLedgerStartRace races on; LEDGER_START_RACES=TWO,EIGHT raises
// the two-way and the eight-way counts (200 and 50 is the bar for a
// change to the first start).
func startRaces(t *testing.T) (two, eight int) {
	two, eight = 8, 2
	if s := os.Getenv("LEDGER_START_RACES"); s != "" {
		if _, err := fmt.Sscanf(s, "%d,%d", &two, &eight); err != nil || two < 0 || eight < 0 {
			t.Fatalf("LEDGER_START_RACES must be TWO,EIGHT (counts)")
		}
	}
	return two, eight
}

// TestFreshLedgerStartRace starts several task-state-guard processes at
// once on a ledger that does not exist yet, as a supervisor starting its
// workers does: every one must answer ok (exit 0, {"ok":true,...}), never
// StateConflict because another created the file or held SQLite's lock
// while setting the ledger up. Afterwards doctor is healthy and, for
// create, the ledger holds one task per process.
func TestFreshLedgerStartRace(t *testing.T) {
	bin := ledgerBinary(t)
	two, eight := startRaces(t)
	cases := []struct {
		command string
		procs   int
		races   int
	}{
		{"create", 2, two},
		{"init", 2, two},
		{"create", 8, eight},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s-%d", c.command, c.procs), func(t *testing.T) {
			failures := 0
			for r := 0; r < c.races; r++ {
				db := platformtest.LedgerParent(t, filepath.Join(t.TempDir(), "fleet", "tasks.sqlite"))
				outs := raceProcesses(t, bin, c.procs, "--db", db, c.command)
				for p, out := range outs {
					if !strings.HasPrefix(out, `{"ok":true,`) {
						failures++
						t.Errorf("race %d, process %d: %s", r, p, out)
					}
				}
				if failures > 0 {
					continue
				}
				var rep struct {
					Healthy   bool `json:"healthy"`
					TaskCount int  `json:"task_count"`
				}
				out, rc := runLedger(t, bin, "--db", db, "doctor")
				if err := json.Unmarshal([]byte(out), &rep); err != nil || rc != 0 || !rep.Healthy {
					t.Fatalf("race %d: doctor exit %d: %s", r, rc, out)
				}
				if want := map[string]int{"create": c.procs, "init": 0}[c.command]; rep.TaskCount != want {
					t.Fatalf("race %d: %d tasks, want %d", r, rep.TaskCount, want)
				}
			}
			t.Logf("%d races of %d %s processes, %d failures", c.races, c.procs, c.command, failures)
		})
	}
}

// TestReaderBesideFreshCreation starts a read-only list together with the
// create that makes the ledger, as a monitor beside a fleet's first boot
// does. Whatever moment of the creation the reader meets, its answer is
// one spec 12.5 gives for that moment, named by its reason: no database
// yet, a file SQLite has not written a page of yet, a database with no
// schema yet, or the ledger (empty, or holding the new task). Never a
// storage refusal such as "not in WAL mode" or a mode that is not
// private, which would tell the operator to fix a file that is only
// being made.
func TestReaderBesideFreshCreation(t *testing.T) {
	bin := ledgerBinary(t)
	races, _ := startRaces(t)
	allowed := []string{
		`{"error":"InvalidInput","ok":false} (exit status 2; stderr "task-state-guard: InvalidInput: database does not exist\n")`,
		`{"error":"StateConflict","ok":false} (exit status 2; stderr "task-state-guard: StateConflict: database file is not a valid ledger\n")`,
		`{"error":"StateConflict","ok":false} (exit status 2; stderr "task-state-guard: StateConflict: database holds no ledger\n")`,
		`{"next":null,"ok":true,"tasks":[]}`,
	}
	const id = "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"
	seen := map[string]int{}
	for r := 0; r < races; r++ {
		dir := filepath.Join(t.TempDir(), "fleet")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "tasks.sqlite")
		outs := raceCommands(t, bin, [][]string{
			{"--db", db, "create", "--task-id", id},
			{"--db", db, "list"},
		})
		if !strings.HasPrefix(outs[0], `{"ok":true,`) {
			t.Fatalf("race %d: create answered %s", r, outs[0])
		}
		answer := outs[1]
		if strings.HasPrefix(answer, `{"next":null,"ok":true,"tasks":[{`) && strings.Contains(answer, `"id":"`+id+`"`) {
			answer = "the new task"
		} else if !slices.Contains(allowed, answer) {
			t.Fatalf("race %d: list beside the creation answered %s", r, answer)
		}
		seen[answer]++
	}
	t.Logf("%d races; list's answers: %v", races, seen)
}

// raceProcesses starts n processes of bin with args, all before waiting
// for any, and returns each one's stdout with its exit status.
func raceProcesses(t *testing.T, bin string, n int, args ...string) []string {
	t.Helper()
	argvs := make([][]string, n)
	for i := range argvs {
		argvs[i] = args
	}
	return raceCommands(t, bin, argvs)
}

// raceCommands starts one process of bin for each argument list, all
// before waiting for any, and returns each one's stdout with its exit
// status (and stderr, where the exit is not 0).
func raceCommands(t *testing.T, bin string, argvs [][]string) []string {
	t.Helper()
	n := len(argvs)
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	// Start them all, then wait for all: the starts are as close together
	// as exec allows.
	var wg sync.WaitGroup
	for i := range cmds {
		err := platformtest.RetryWineStart(t, func() error {
			cmds[i] = exec.Command(bin, platformtest.ACLArgs(argvs[i]...)...)
			cmds[i].Stdout = &outs[i]
			cmds[i].Env = append(os.Environ(), "TASK_STATE_GUARD_EXPLAIN=1")
			cmds[i].Stderr = new(strings.Builder)
			return cmds[i].Start()
		})
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	res := make([]string, n)
	for i, cmd := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmd.Wait()
			res[i] = strings.TrimSpace(outs[i].String())
			if err != nil {
				res[i] += fmt.Sprintf(" (%v; stderr %q)", err, cmd.Stderr.(*strings.Builder).String())
			}
		}()
	}
	wg.Wait()
	return res
}
