//go:build unix

package sweepcli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/tools/planrun/journal"
)

// TestCrashLoopSweep kills writers of one state file at random moments.
// After every kill, before any writer runs, the file must be byte for byte
// the document before the call in flight or after it (computed by running
// that call again on a copy of the before-document), it must read as OK or
// NO-STATE, never CORRUPT, and no call of the next plan may trip over what
// the kill left (a temporary file, a lock file): none answers CORRUPT or
// ERROR. STATEGUARD_CRASH_KILLS=N runs N kills.
func TestCrashLoopSweep(t *testing.T) {
	kills, rng := journal.Config(t, 0x5eed)
	dir := t.TempDir()
	planrun, err := journal.BuildPlanrun(dir)
	if err != nil {
		t.Fatal(err)
	}
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
		j, err := journal.RunAndKill(planrun, dir, plan, time.Duration(rng.IntN(40_000))*time.Microsecond)
		if err != nil {
			t.Fatal(err)
		}
		calls += len(j.Ended)
		for i, e := range j.Ended {
			word := strings.SplitN(e.Stdout, "\n", 2)[0]
			if e.ExitStatus != 0 || word == "CORRUPT" || word == "ERROR" {
				t.Fatalf("kill %d: call %d %q answered %q (exit %d) after the previous kill", k, i, plan[i].Argv[1:], e.Stdout, e.ExitStatus)
			}
		}
		cur, err := os.ReadFile(state)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		switch {
		case j.InFlight >= 0:
			inFlight++
			old, err := os.ReadFile(before)
			if err != nil {
				t.Fatal(err)
			}
			oldExists := string(old) != journal.Absent
			if !oldExists {
				old = nil
			}
			if exists == oldExists && bytes.Equal(cur, old) {
				break
			}
			next, nextExists := replaySweep(t, scratch, plan[j.InFlight].Argv, old, oldExists)
			if exists != nextExists || !bytes.Equal(cur, next) {
				t.Fatalf("kill %d: torn or lost: call %q was in flight; the file is neither the document before it nor after it\nfile (exists %v):\n%s\nbefore (exists %v):\n%s\nafter (exists %v):\n%s",
					k, plan[j.InFlight].Argv[1:], exists, clip(cur), oldExists, clip(old), nextExists, clip(next))
			}
			afterWrite++
		case len(j.Ended) > 0:
			if want := j.Ended[len(j.Ended)-1].Hash; hashOf(cur, exists) != want {
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
	t.Logf("%d kills, %d calls returned; %d kills hit a call in flight (after %d of them the file already held the new document); 0 torn, 0 lost; %d temporary files left by kills (harmless: fresh names each write)",
		kills, calls, inFlight, afterWrite, leftover)
}

func hashOf(b []byte, exists bool) string {
	if !exists {
		return journal.AbsentHash
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
func sweepPlan(rng *rand.Rand, state, before, legacy string, n int) []journal.Step {
	writers := []string{"w1", "w2"}
	now := func() string {
		return time.Date(2026, 7, 2, 12, rng.IntN(8), rng.IntN(2)*30, 0, time.UTC).Format(time.RFC3339)
	}
	var plan []journal.Step
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
		plan = append(plan, journal.Step{Argv: argv, Snapshot: &journal.Snapshot{From: state, To: before}, Hash: state})
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
