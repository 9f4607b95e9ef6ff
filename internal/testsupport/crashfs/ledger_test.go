//go:build linux

package crashfs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/crashfs"
)

// dbPath is where every ledger scenario keeps its database, below two
// directories that the first call creates in the "created" variants.
const dbPath = "x/y/tasks.sqlite"

const (
	taskA = "5eed0000-0000-4000-8000-00000000000a"
	taskB = "5eed0000-0000-4000-8000-00000000000b"
	taskC = "5eed0000-0000-4000-8000-00000000000c"
)

var ledgerTasks = []string{taskA, taskB}

// ledgerCall is one call with the pinned clock of its process.
type ledgerCall struct {
	args []string
	now  int
}

func (c ledgerCall) env() []string {
	return []string{ledgercli.TestClockEnv + "=1", fmt.Sprintf("%s=%d", ledgercli.TestNowEnv, c.now)}
}

func (c ledgerCall) name() string {
	if c.args[0] == "create" && len(c.args) > 3 && c.args[3] == "--parent-id" {
		return "create-parent"
	}
	return c.args[0]
}

// ledgerSequence is every mutating command, each one changing the ledger,
// with the clock one second on per call.
func ledgerSequence(withInit bool) []ledgerCall {
	calls := [][]string{
		{"create", "--task-id", taskA, "--timeout-seconds", "60"},
		{"create", "--task-id", taskB, "--parent-id", taskA, "--internal"},
		{"start", taskA},
		{"heartbeat", taskA},
		{"close", taskA, "--status", "succeeded"},
		{"delivery", taskA, "--status", "delivered"},
		{"start", taskB},
		{"reconcile", "--active-grace-seconds", "1", "--delivery-grace-seconds", "1"},
	}
	if withInit {
		calls = append([][]string{{"init"}}, calls...)
	}
	var out []ledgerCall
	for i, a := range calls {
		now := 1_700_000_000 + i
		if a[0] == "reconcile" {
			now += 3600 // B is stale by then: reconcile times it out
		}
		out = append(out, ledgerCall{args: a, now: now})
	}
	return out
}

var ledgerCommands = []string{"init", "create", "create-parent", "start", "heartbeat", "close", "delivery", "reconcile"}

func ledgerArgv(c ledgerCall, db string) []string { return append([]string{"--db", db}, c.args...) }

// ledgerView is what the read-only commands answer on a tree written out:
// the doctor's health and every task as get prints it.
type ledgerView struct {
	healthy bool
	doctor  string
	tasks   string
}

func viewLedger(t *testing.T, bin string, tree *crashfs.Node) ledgerView {
	t.Helper()
	return viewTasks(t, bin, tree, ledgerTasks)
}

// viewTasks is viewLedger for the tasks ids.
func viewTasks(t *testing.T, bin string, tree *crashfs.Node, ids []string) ledgerView {
	t.Helper()
	db := filepath.Join(writeOut(t, tree), dbPath)
	out, rc := run(t, nil, bin, "--db", db, "doctor")
	var rep struct{ Healthy bool }
	json.Unmarshal([]byte(out), &rep)
	v := ledgerView{healthy: rc == 0 && rep.Healthy, doctor: answer(out, rc)}
	var tasks []string
	for _, id := range ids {
		tasks = append(tasks, answer(run(t, nil, bin, "--db", db, "get", id)))
	}
	v.tasks = strings.Join(tasks, "\n")
	return v
}

// hasDB reports whether a tree holds the database file.
func hasDB(n *crashfs.Node) bool { return n.Lookup(dbPath) != nil }

type ledgerStep struct {
	call          ledgerCall
	before, after *crashfs.Node
	beforeView    ledgerView
	afterView     ledgerView
	answer        string
	ops           int
}

// refOpts shape a reference run: whether the directories exist first,
// whether proof (a) is checked after each call, and whether a child holds
// the ledger open after the first call.
type refOpts struct{ makeDirs, checkAcked, hold bool }

// ledgerReference runs calls on a fresh scenario and checks proof (a)
// after each answer: written out as a cut right then would leave it, the
// ledger is healthy and every task reads as it does live.
func ledgerReference(t *testing.T, m *crashfs.Mount, name string, o refOpts, calls []ledgerCall) []ledgerStep {
	t.Helper()
	_, bin := binaries(t)
	dir := scenario(t, m, name, nil)
	if o.makeDirs {
		if err := os.MkdirAll(filepath.Join(dir, "x", "y"), 0o700); err != nil {
			t.Fatal(err)
		}
		m.FS.SyncAll()
	}
	db := filepath.Join(dir, dbPath)
	var steps []ledgerStep
	for _, c := range calls {
		st := ledgerStep{call: c, before: m.FS.Current().Lookup(name)}
		if len(steps) > 0 {
			st.beforeView = steps[len(steps)-1].afterView
		} else {
			st.beforeView = viewLedger(t, bin, st.before)
		}
		ops := m.FS.Ops()
		out, rc := run(t, c.env(), bin, ledgerArgv(c, db)...)
		st.answer = answer(out, rc)
		st.ops = m.FS.Ops() - ops
		if rc != 0 {
			t.Fatalf("%s: %s answered %s", name, c.name(), st.answer)
		}
		st.after = m.FS.Current().Lookup(name)
		st.afterView = viewLedger(t, bin, st.after)
		steps = append(steps, st)
		if o.hold && len(steps) == 1 {
			// A child keeps the ledger open from here on, so no CLI call
			// is the last connection and none checkpoints at close: each
			// commit is durable only through the -wal's own sync.
			startChild(t, "hold "+db)
		}
		if !o.checkAcked {
			continue
		}
		durable := viewLedger(t, bin, m.FS.Durable().Lookup(name))
		if !durable.healthy || durable.tasks != st.afterView.tasks {
			t.Errorf("%s: a cut right after %s (answered %s) loses it:\ndoctor %s\ntasks\n%s\nlive\n%s",
				name, c.name(), st.answer, durable.doctor, durable.tasks, st.afterView.tasks)
		}
	}
	return steps
}

// TestLedgerAcknowledgedCallsSurvive is proof (a) for task-state-guard:
// after every mutating command (init, create with and without a parent,
// start, heartbeat, close, delivery, reconcile), on directories that exist
// and on directories the first call (init, or create) makes, a cut right
// after the answer leaves a healthy ledger whose tasks read as live; also
// while a child process holds the ledger open, so that no call's close
// checkpoints and every commit rests on the -wal's sync alone.
func TestLedgerAcknowledgedCallsSurvive(t *testing.T) {
	m := mount(t)
	ledgerReference(t, m, "existing", refOpts{makeDirs: true, checkAcked: true}, ledgerSequence(true))
	ledgerReference(t, m, "created-by-init", refOpts{checkAcked: true}, ledgerSequence(true))
	ledgerReference(t, m, "created-by-create", refOpts{checkAcked: true}, ledgerSequence(false))
	// Beside a connection that stays open, no call checkpoints at close.
	ledgerReference(t, m, "held-open", refOpts{makeDirs: true, checkAcked: true, hold: true}, ledgerSequence(true))
}

// TestLedgerCutsInsideCalls is proof (b) for task-state-guard: a cut after
// the k-th state-changing operation of every mutating command leaves a
// ledger whose tasks all read as before the call or all as after it, and
// whose doctor is healthy (while the call in flight is the one creating
// the database, nothing was promised yet: the doctor may refuse what is
// there); then init, a writer, answers ok on what survived, and after it
// the ledger is healthy and still reads the same. The short run cuts at up
// to 2 points per call; STATEGUARD_POWERLOSS_LONG=1 at every one. Proof
// (c): each cut with unsynced changes (the -wal's frames before their
// fsync, the database's pages in a checkpoint, the -shm) is also checked
// in torn variants, a part of those changes kept as drawn from a fixed
// seed: SQLite's recovery must leave the same before or after.
func TestLedgerCutsInsideCalls(t *testing.T) {
	m := mount(t)
	_, bin := binaries(t)
	counts := map[string]*tally{}
	for _, variant := range []string{"existing", "created"} {
		// On existing directories create makes the ledger; on created ones
		// init makes the directories and the ledger.
		steps := ledgerReference(t, m, "ref-"+variant, refOpts{makeDirs: variant == "existing"}, ledgerSequence(variant == "created"))
		for i, st := range steps {
			n := counts[st.call.name()]
			if n == nil {
				n = &tally{}
				counts[st.call.name()] = n
			}
			n.calls++
			n.ops += st.ops
			for _, k := range cutPoints(st.ops, 2) {
				name := fmt.Sprintf("cut-%s-%d-%d", variant, i, k)
				dir := scenario(t, m, name, st.before)
				m.FS.ArmCut(k)
				run(t, st.call.env(), bin, ledgerArgv(st.call, filepath.Join(dir, dbPath))...)
				cut := m.FS.Cut()
				log := m.FS.Log()
				m.FS.Disarm()
				if cut == nil {
					t.Fatalf("%s: the call made fewer than %d operations this time: %q", name, k, log)
				}
				n.cuts++
				side := checkLedgerSurvivor(t, bin, name, cut.Lookup(name), st, log, n)
				if k == st.ops {
					// Nothing changes between the last operation and the
					// answer: this cut is a cut right after the answer.
					if v := viewLedger(t, bin, cut.Lookup(name)); !v.healthy || v.tasks != st.afterView.tasks {
						t.Errorf("%s: a cut after the call's last operation loses %s: doctor %s\n%s", name, st.call.name(), v.doctor, v.tasks)
					}
				}
				switch side {
				case "before":
					n.before++
				case "after":
					n.after++
				}
				for j := 0; j < tornPerCut(t) && m.FS.TornFiles() > 0; j++ {
					seed := tornSeed(name, j)
					torn, kept := m.FS.TornCut(seed)
					n.torn++
					tside := checkLedgerSurvivor(t, bin, fmt.Sprintf("%s torn with seed %d (%s)", name, seed, kept), torn.Lookup(name), st, log, n)
					if tside == "after" && side == "before" && hasDB(st.before) {
						// Beyond the strict model more may survive, but
						// only whole: the checks above saw all of it.
						n.tornAfter++
					}
				}
			}
		}
	}
	report(t, "ledger", counts, ledgerCommands)
}

// checkLedgerSurvivor checks one cut's tree and says which side it read
// as ("before", "after", or "" after an error).
func checkLedgerSurvivor(t *testing.T, bin, name string, tree *crashfs.Node, st ledgerStep, log []string, n *tally) string {
	t.Helper()
	got := viewLedger(t, bin, tree)
	creating := !hasDB(st.before)
	if !got.healthy && creating {
		n.refused++
	}
	side := ""
	switch got.tasks {
	case st.beforeView.tasks:
		side = "before"
	case st.afterView.tasks:
		side = "after"
	}
	if side == "" && !creating {
		t.Errorf("%s: after %q the tasks read neither as before nor as after %s:\n%s\nbefore\n%s\nafter\n%s",
			name, log, st.call.name(), got.tasks, st.beforeView.tasks, st.afterView.tasks)
		return ""
	}
	if !got.healthy && !creating {
		t.Errorf("%s: after %q the doctor answers %s", name, log, got.doctor)
	}
	// The next writer works on what survived, and changes nothing a
	// reader sees.
	dir := writeOut(t, tree)
	db := filepath.Join(dir, dbPath)
	if out, rc := run(t, st.call.env(), bin, "--db", db, "init"); rc != 0 {
		t.Errorf("%s: init after the cut answers %s", name, answer(out, rc))
		return side
	}
	out, rc := run(t, nil, bin, "--db", db, "doctor")
	if !strings.Contains(out, `"healthy":true`) || rc != 0 {
		t.Errorf("%s: doctor after the next writer answers %s", name, answer(out, rc))
	}
	var tasks []string
	for _, id := range ledgerTasks {
		tasks = append(tasks, answer(run(t, nil, bin, "--db", db, "get", id)))
	}
	after := strings.Join(tasks, "\n")
	if !creating {
		if after != got.tasks {
			t.Errorf("%s: the next writer changed what the tasks read:\n%s\nwas\n%s", name, after, got.tasks)
		}
		return side
	}
	// The call in flight was creating the ledger: whatever read-only
	// commands made of that, the writer leaves an empty ledger or the
	// call's whole effect, and keeps the effect if a reader saw it.
	switch {
	case after == st.afterView.tasks:
		return "after"
	case got.tasks == st.afterView.tasks:
		t.Errorf("%s: the next writer lost the call's effect:\n%s", name, after)
	case after != emptyLedger():
		t.Errorf("%s: after the creating call's cut and init, the tasks read\n%s", name, after)
	}
	return "before"
}

// emptyLedger is what get answers for every task on a ledger without them.
func emptyLedger() string {
	var tasks []string
	for range ledgerTasks {
		tasks = append(tasks, answer(`{"error":"TaskNotFound","ok":false}`, 2))
	}
	return strings.Join(tasks, "\n")
}
