//go:build unix

package cli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment knobs shared by the crash loops of both engines.
const (
	crashKillsEnv = "STATEGUARD_CRASH_KILLS" // kills per engine (default 50)
	crashSeedEnv  = "STATEGUARD_CRASH_SEED"  // replay a run
)

// crashConfig reads the knobs; the seed is printed so a failure replays
// (the kill moments themselves depend on timing, the plans do not).
func crashConfig(t *testing.T) (kills int, rng *rand.Rand) {
	kills = 50
	if s := os.Getenv(crashKillsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", crashKillsEnv, s)
		}
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a number", crashSeedEnv, s)
		}
		seed = n
	}
	t.Logf("crash loop: %d kills, seed %d (replay the plans with %s=%d)", kills, seed, crashSeedEnv, seed)
	return kills, rand.New(rand.NewPCG(seed, 0x5eed))
}

// planStep is one step of tools/planrun's plan.
type planStep struct {
	Argv     []string          `json:"argv"`
	Env      []string          `json:"env,omitempty"`
	Snapshot map[string]string `json:"snapshot,omitempty"`
	Hash     string            `json:"hash,omitempty"`
}

// journalEnd is an "E" line of the journal.
type journalEnd struct {
	rc     int
	hash   string
	stdout string
}

// journal is a parsed planrun journal: the calls that returned, and the
// call that had begun but not returned when the kill came (-1 if none).
type journal struct {
	ended    []journalEnd
	inFlight int
}

func readJournal(t *testing.T, p string) journal {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	j := journal{inFlight: -1}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "B":
			j.inFlight, _ = strconv.Atoi(f[1])
		case len(f) >= 4 && f[0] == "E":
			// A line cut short by the kill has no trailing newline and is
			// the last element; planrun writes each line in one write, so
			// that does not happen, but a missing field would show here.
			i, _ := strconv.Atoi(f[1])
			rc, _ := strconv.Atoi(f[2])
			out := ""
			if len(f) == 5 {
				b, err := base64.StdEncoding.DecodeString(f[4])
				if err != nil {
					t.Fatalf("journal line %q: %v", line, err)
				}
				out = string(b)
			}
			if i != len(j.ended) || i != j.inFlight {
				t.Fatalf("journal out of order at %q", line)
			}
			j.ended = append(j.ended, journalEnd{rc: rc, hash: f[3], stdout: out})
			j.inFlight = -1
		case line == "":
		default:
			t.Fatalf("journal line %q", line)
		}
	}
	return j
}

// buildPlanrun builds tools/planrun into dir.
func buildPlanrun(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "planrun")
	build := exec.Command("go", "build", "-o", p, "github.com/stateguard/stateguard/tools/planrun")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building planrun: %v\n%s", err, out)
	}
	return p
}

// runAndKill starts planrun on plan in its own process group, SIGKILLs the
// group after delay, and returns the journal.
func runAndKill(t *testing.T, planrun, dir string, plan []planStep, delay time.Duration) journal {
	t.Helper()
	planFile := filepath.Join(dir, "plan.json")
	journalFile := filepath.Join(dir, "journal")
	os.Remove(journalFile)
	data, _ := json.Marshal(map[string]any{"steps": plan})
	if err := os.WriteFile(planFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(planrun, planFile, journalFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The kill moment is the fault being injected, not a synchronisation.
	time.Sleep(delay)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if err == nil && stderr.Len() > 0 {
		t.Fatalf("planrun: %s", stderr.String())
	}
	return readJournal(t, journalFile)
}

// TestCrashLoopSweep kills writers of one state file at random moments.
// After every kill, before any writer runs, the file must be byte for byte
// the document before the call in flight or after it (computed by running
// that call again on a copy of the before-document), it must read as OK or
// NO-STATE, never CORRUPT, and no call of the next plan may trip over what
// the kill left (a temporary file, a lock file): none answers CORRUPT or
// ERROR. STATEGUARD_CRASH_KILLS=N runs N kills.
func TestCrashLoopSweep(t *testing.T) {
	kills, rng := crashConfig(t)
	dir := t.TempDir()
	planrun := buildPlanrun(t, dir)
	state := filepath.Join(dir, "state", "state.yml")
	before := filepath.Join(dir, "before.yml")
	legacy := filepath.Join(dir, "legacy.json")
	if err := os.WriteFile(legacy, []byte(`{"channels": {"C1": {"cursor": "5"}}, "items": [{"id": "L1", "status": "ingested"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	scratch := filepath.Join(dir, "scratch")
	prev, prevExists := []byte(nil), false
	var inFlight, afterWrite, leftover, calls int
	for k := 0; k < kills; k++ {
		plan := sweepPlan(rng, state, before, legacy, 12)
		j := runAndKill(t, planrun, dir, plan, time.Duration(rng.IntN(40_000))*time.Microsecond)
		calls += len(j.ended)
		for i, e := range j.ended {
			word := strings.SplitN(e.stdout, "\n", 2)[0]
			if e.rc != 0 || word == "CORRUPT" || word == "ERROR" {
				t.Fatalf("kill %d: call %d %q answered %q (exit %d) after the previous kill", k, i, plan[i].Argv[1:], e.stdout, e.rc)
			}
		}
		cur, err := os.ReadFile(state)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		switch {
		case j.inFlight >= 0:
			inFlight++
			old, err := os.ReadFile(before)
			if err != nil {
				t.Fatal(err)
			}
			oldExists := string(old) != "ABSENT\n"
			if exists == oldExists && bytes.Equal(cur, old) {
				break
			}
			next, nextExists := replaySweep(t, scratch, plan[j.inFlight].Argv, old, oldExists)
			if exists != nextExists || !bytes.Equal(cur, next) {
				t.Fatalf("kill %d: torn or lost: call %q was in flight; the file is neither the document before it nor after it\nfile:\n%s\nbefore:\n%s\nafter:\n%s",
					k, plan[j.inFlight].Argv[1:], clip(cur), clip(old), clip(next))
			}
			afterWrite++
		case len(j.ended) > 0:
			if want := j.ended[len(j.ended)-1].hash; hashOf(cur, exists) != want {
				t.Fatalf("kill %d: the file is not what the last returned call left", k)
			}
		default:
			if exists != prevExists || !bytes.Equal(cur, prev) {
				t.Fatalf("kill %d: the file changed although no call began", k)
			}
		}
		out, err := exec.Command(binPath, "read", "--state", state).Output()
		if word := strings.SplitN(string(out), "\n", 2)[0]; err != nil || (word != "OK" && word != "NO-STATE") {
			t.Fatalf("kill %d: read after the kill answered %q (%v)\nfile:\n%s", k, out, err, clip(cur))
		}
		prev, prevExists = cur, exists
	}
	entries, _ := os.ReadDir(filepath.Dir(state))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			leftover++
		}
	}
	t.Logf("%d kills, %d calls returned; %d kills hit a call in flight (%d of them after its rename); 0 torn, 0 lost; %d temporary files left by kills (harmless: fresh names each write)",
		kills, calls, inFlight, afterWrite, leftover)
}

func hashOf(b []byte, exists bool) string {
	if !exists {
		return "absent"
	}
	return sha256Hex(b)
}

// replaySweep runs argv (a sweep-state call) against a copy of the
// before-document in scratch and returns what the file holds afterwards.
func replaySweep(t *testing.T, scratch string, argv []string, old []byte, oldExists bool) ([]byte, bool) {
	t.Helper()
	os.RemoveAll(scratch)
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(scratch, "state.yml")
	if oldExists {
		if err := os.WriteFile(p, old, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string(nil), argv[1:]...)
	args[2] = p // argv is: bin, subcommand, --state, PATH, ...
	if out, err := exec.Command(binPath, args...).Output(); err != nil {
		t.Fatalf("replay %q: %v %q", args, err, out)
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// sweepPlan draws n calls of every subcommand. Times are explicit so that
// a replay writes the same bytes; lease times straddle short TTLs so that
// LOCKED, STALE-RECLAIMED and LEASE-LOST all happen.
func sweepPlan(rng *rand.Rand, state, before, legacy string, n int) []planStep {
	writers := []string{"w1", "w2"}
	now := func() string {
		return time.Date(2026, 7, 2, 12, rng.IntN(8), rng.IntN(2)*30, 0, time.UTC).Format(time.RFC3339)
	}
	var plan []planStep
	for i := 0; i < n; i++ {
		w := writers[rng.IntN(len(writers))]
		src := fmt.Sprintf("src-%d", rng.IntN(3))
		id := fmt.Sprint(rng.IntN(12))
		var args []string
		switch r := rng.IntN(20); {
		case r < 4:
			args = []string{"lease-acquire", "--writer", w, "--now", now(), "--ttl-minutes", fmt.Sprint(1 + rng.IntN(3))}
		case r < 5:
			args = []string{"lease-release", "--writer", w}
		case r < 11:
			item := map[string]any{"status": []string{"ingested", "closed", "analyzed", "fix_pending"}[rng.IntN(4)], "title": "t" + id}
			if rng.IntN(2) == 0 {
				// Big bodies make writes slow enough to be hit mid-way.
				item["body"] = strings.Repeat("body ", rng.IntN(6000))
			}
			if rng.IntN(6) == 0 {
				item["sensitive"] = true
			}
			if rng.IntN(3) == 0 {
				item["fix_ref"], item["verified_revision_id"], item["verified_at"] = "PR-1", "abc", "2026-07-01"
			}
			js, _ := json.Marshal(item)
			args = []string{"upsert-item", "--source", src, "--id", id, "--json", string(js), "--writer", w, "--now", now()}
		case r < 13:
			args = []string{"cursor-advance", "--source", src, "--to", fmt.Sprint(rng.IntN(30)), "--past-item", id, "--writer", w, "--now", now()}
		case r < 15:
			args = []string{"validate"}
		case r < 17:
			args = []string{"run-record", "--writer", w, "--outcome", "partial", "--counts", fmt.Sprintf(`{"n": %d}`, i), "--timestamp", now()}
		case r < 18:
			args = []string{"import-legacy", "--file", legacy}
		default:
			args = []string{"read"}
		}
		argv := append([]string{binPath, args[0], "--state", state}, args[1:]...)
		plan = append(plan, planStep{Argv: argv, Snapshot: map[string]string{"from": state, "to": before}, Hash: state})
	}
	return plan
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// clip shortens a document for a failure message.
func clip(b []byte) string {
	const max = 1500
	if len(b) <= max {
		return string(b)
	}
	return fmt.Sprintf("%s\n... (%d bytes in all)", b[:max], len(b))
}
