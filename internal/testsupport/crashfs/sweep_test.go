//go:build linux

package crashfs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/crashfs"
)

// statePath is where every sweep scenario keeps its state file, below two
// directories that the first call creates in the "created" variant.
const statePath = "a/b/state.yml"

const sweepNow = "2026-07-02T12:00:00Z"

// sweepSequence is one call of every mutating subcommand (three of
// upsert-item), in an order in which each one writes.
func sweepSequence(legacy string) [][]string {
	big := strings.Repeat("body ", 3000) // a state file of several sectors and writes
	return [][]string{
		{"lease-acquire", "--writer", "w1", "--now", sweepNow, "--ttl-minutes", "30"},
		{"upsert-item", "--source", "s1", "--id", "1", "--json", `{"status": "ingested", "title": "one"}`, "--writer", "w1", "--now", sweepNow},
		{"upsert-item", "--source", "s1", "--id", "2", "--json", `{"status": "ingested", "title": "two", "body": "` + big + `"}`, "--writer", "w1", "--now", sweepNow},
		{"upsert-item", "--source", "s1", "--id", "1", "--json", `{"status": "closed", "title": "one", "fix_ref": "PR-1", "verified_revision_id": "abc", "verified_at": "2026-07-01"}`, "--writer", "w1", "--now", sweepNow},
		{"cursor-advance", "--source", "s1", "--to", "5", "--past-item", "2", "--writer", "w1", "--now", sweepNow},
		{"import-legacy", "--file", legacy},
		{"validate"}, // downgrades the imported closed item without evidence
		{"run-record", "--writer", "w1", "--outcome", "partial", "--counts", `{"n": 1}`, "--timestamp", sweepNow},
		{"lease-release", "--writer", "w1"},
	}
}

var sweepCommands = []string{"lease-acquire", "upsert-item", "cursor-advance", "validate", "run-record", "import-legacy", "lease-release"}

func sweepArgv(call []string, state string) []string {
	return append([]string{call[0], "--state", state}, call[1:]...)
}

func legacyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "legacy.json")
	if err := os.WriteFile(p, []byte(`{"channels": {"C1": {"cursor": "5"}}, "items": [{"id": "L1", "status": "closed"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// sweepStep is one call of a reference run: the scenario's tree before and
// after it, its answer and how many state-changing operations it made.
type sweepStep struct {
	call          []string
	before, after *crashfs.Node
	answer        string
	ops           int
}

func fileBytes(n *crashfs.Node) []byte {
	if n == nil || n.Dir {
		return nil
	}
	return n.Data
}

func sameFile(a, b *crashfs.Node) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return bytes.Equal(fileBytes(a), fileBytes(b))
}

// sweepReference runs calls on a fresh scenario of the mount and checks
// proof (a) after each answer: the durable state file is the current one,
// byte for byte, and read answers the same on both. It returns the steps
// for the cuts of proof (b).
func sweepReference(t *testing.T, m *crashfs.Mount, name string, makeDirs, checkAcked bool, calls [][]string) []sweepStep {
	t.Helper()
	bin, _ := binaries(t)
	dir := scenario(t, m, name, nil)
	if makeDirs {
		if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
			t.Fatal(err)
		}
		m.FS.SyncAll()
	}
	state := filepath.Join(dir, statePath)
	var steps []sweepStep
	for _, call := range calls {
		st := sweepStep{call: call, before: m.FS.Current().Lookup(name)}
		ops := m.FS.Ops()
		st.answer = answer(run(t, nil, bin, sweepArgv(call, state)...))
		st.ops = m.FS.Ops() - ops
		st.after = m.FS.Current().Lookup(name)
		steps = append(steps, st)
		if !checkAcked {
			continue
		}
		durable := m.FS.Durable().Lookup(name)
		cur, dur := st.after.Lookup(statePath), durable.Lookup(statePath)
		readCur := answer(run(t, nil, bin, "read", "--state", filepath.Join(writeOut(t, st.after), statePath)))
		readDur := answer(run(t, nil, bin, "read", "--state", filepath.Join(writeOut(t, durable), statePath)))
		if !sameFile(cur, dur) || readCur != readDur {
			t.Errorf("%s: a cut right after %s (answered %s) loses it: read answers %s, live %s; durable names %q",
				name, call[0], st.answer, readDur, readCur, durable.Names())
		}
	}
	return steps
}

// TestSweepAcknowledgedCallsSurvive is proof (a) for sweep-state: after
// every mutating subcommand, on directories that exist and on directories
// the first call creates, a cut right after the answer keeps the state
// file exactly as the call left it.
func TestSweepAcknowledgedCallsSurvive(t *testing.T) {
	m := mount(t)
	legacy := legacyFile(t)
	calls := sweepSequence(legacy)
	sweepReference(t, m, "existing", true, true, calls)
	sweepReference(t, m, "created", false, true, calls)
	// Each subcommand as the call that creates the directories.
	for i, c := range calls {
		sweepReference(t, m, fmt.Sprintf("first-%d-%s", i, c[0]), false, true, [][]string{c})
	}
}

// TestSweepCutsInsideCalls is proof (b) for sweep-state: a cut after the
// k-th state-changing operation of every mutating subcommand leaves the
// state file byte for byte as it was before the call or as the call left
// it, read never answers CORRUPT, and the same call run again on what
// survived answers neither CORRUPT nor ERROR. The short run cuts at up to
// 4 points per call; STATEGUARD_POWERLOSS_LONG=1 at every one. Proof (c):
// where a file of the cut has unsynced changes, torn variants of the cut
// (a part of those changes kept, drawn from a fixed seed) must pass the
// same checks; the temporary file's entry is durable only once it is
// renamed and synced, so the sweep leaves none.
func TestSweepCutsInsideCalls(t *testing.T) {
	m := mount(t)
	bin, _ := binaries(t)
	legacy := legacyFile(t)
	counts := map[string]*tally{}
	for _, variant := range []string{"existing", "created"} {
		steps := sweepReference(t, m, "ref-"+variant, variant == "existing", false, sweepSequence(legacy))
		for i, st := range steps {
			n := counts[st.call[0]]
			if n == nil {
				n = &tally{}
				counts[st.call[0]] = n
			}
			n.calls++
			n.ops += st.ops
			for _, k := range cutPoints(st.ops, 4) {
				name := fmt.Sprintf("cut-%s-%d-%d", variant, i, k)
				dir := scenario(t, m, name, st.before)
				m.FS.ArmCut(k)
				run(t, nil, bin, sweepArgv(st.call, filepath.Join(dir, statePath))...)
				cut := m.FS.Cut()
				log := m.FS.Log()
				m.FS.Disarm()
				if cut == nil {
					t.Fatalf("%s: the call made fewer than %d operations this time: %q", name, k, log)
				}
				n.cuts++
				sub := cut.Lookup(name)
				got := sub.Lookup(statePath)
				switch {
				case sameFile(got, st.before.Lookup(statePath)):
					n.before++
				case sameFile(got, st.after.Lookup(statePath)):
					n.after++
				default:
					t.Errorf("%s: after %q the state file is neither before nor after:\n%s", name, log, fileBytes(got))
				}
				if k == st.ops && !sameFile(got, st.after.Lookup(statePath)) {
					// Nothing changes between the last operation and the
					// answer: this cut is a cut right after the answer.
					t.Errorf("%s: a cut after the call's last operation (%q) loses %s", name, log, st.call[0])
				}
				checkSweepSurvivor(t, bin, name, writeOut(t, sub), st.call)
				for j := 0; j < tornPerCut(t) && m.FS.TornFiles() > 0; j++ {
					seed := tornSeed(name, j)
					torn, kept := m.FS.TornCut(seed)
					label := fmt.Sprintf("%s torn with seed %d (%s)", name, seed, kept)
					n.torn++
					got := torn.Lookup(name).Lookup(statePath)
					if !sameFile(got, st.before.Lookup(statePath)) && !sameFile(got, st.after.Lookup(statePath)) {
						t.Errorf("%s: the state file is neither before nor after:\n%s", label, fileBytes(got))
					}
					checkSweepSurvivor(t, bin, label, writeOut(t, torn.Lookup(name)), st.call)
				}
			}
		}
	}
	report(t, "sweep", counts, sweepCommands)
}

// checkSweepSurvivor: what a cut left reads without CORRUPT, and the next
// writer (the same call again) works on it.
func checkSweepSurvivor(t *testing.T, bin, name, dir string, call []string) {
	t.Helper()
	state := filepath.Join(dir, statePath)
	out, rc := run(t, nil, bin, "read", "--state", state)
	if rc != 0 || strings.HasPrefix(out, "CORRUPT") || strings.HasPrefix(out, "ERROR") {
		t.Errorf("%s: read after the cut answers %s", name, answer(out, rc))
	}
	out, rc = run(t, nil, bin, sweepArgv(call, state)...)
	if strings.HasPrefix(out, "CORRUPT") || strings.HasPrefix(out, "ERROR") {
		t.Errorf("%s: %s after the cut answers %s", name, call[0], answer(out, rc))
	}
}
