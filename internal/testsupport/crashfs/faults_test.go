//go:build linux

package crashfs_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/crashfs"
	sqlite3 "modernc.org/sqlite/lib"
)

// faultKinds are the I/O faults of proof (d): each fails the k-th such
// operation of the call, for k = 1, 2, ... until the call makes fewer
// (a sample of those k in the short run).
// A transient EIO fails one write or fsync; a full disk fails every write
// from the k-th on, and a bad sector every read (the kernel retries a
// failed read once on its own).
var faultKinds = []struct {
	name   string
	op     string
	errno  syscall.Errno
	sticky bool
}{
	{"EIO on write", "write", syscall.EIO, false},
	{"ENOSPC on write", "write", syscall.ENOSPC, true},
	{"EIO on fsync", "fsync", syscall.EIO, false},
	{"EIO on read", "read", syscall.EIO, true},
}

// faultRun runs call once per fault kind and k in a fresh scenario made
// from before, with the fault limited to that scenario, and hands each
// run's answer and scenario to check. It returns the faults injected per
// kind and the distinct answers per kind.
func faultRun(t *testing.T, m *crashfs.Mount, prefix string, before *crashfs.Node,
	call func(dir string) string, check func(kind, name, dir, answer string)) (map[string]int, map[string][]string) {
	t.Helper()
	injected := map[string]int{}
	answers := map[string][]string{}
	for _, fk := range faultKinds {
		seen := map[string]bool{}
		for k := 1; k <= 500; k = nextFaultPoint(k) {
			name := fmt.Sprintf("%s-%s-%d", prefix, strings.ReplaceAll(fk.name, " ", "-"), k)
			dir := scenario(t, m, name, before)
			ft := &crashfs.Fault{Op: fk.op, Nth: k, Errno: fk.errno, Sticky: fk.sticky, Under: name + "/"}
			m.FS.SetFault(ft)
			got := call(dir)
			m.FS.SetFault(nil)
			if ft.Fired() == 0 {
				break
			}
			injected[fk.name] += ft.Fired()
			if !seen[got] {
				seen[got] = true
				answers[fk.name] = append(answers[fk.name], got)
			}
			check(fk.name, name, dir, got)
		}
		sort.Strings(answers[fk.name])
	}
	return injected, answers
}

// nextFaultPoint is the k after k: every one in the long run, else a
// sparser sample as k grows (1, 2, 3, 5, 8, 13, ...).
func nextFaultPoint(k int) int {
	if long() || k < 3 {
		return k + 1
	}
	return k + (k+1)/2
}

func logFaults(t *testing.T, engine string, injected map[string]int, answers map[string][]string) {
	t.Helper()
	for _, fk := range faultKinds {
		t.Logf("%s %-16s faults injected %3d, answers %q", engine, fk.name, injected[fk.name], answers[fk.name])
	}
}

// TestSweepIOFaults is proof (d) for sweep-state: an upsert-item whose
// k-th write, fsync or read fails answers ERROR (CORRUPT when the state
// file cannot be read), leaves the state file as it was (after a failed
// directory sync the new document is in place, as 13.4 says, and the
// answer is still ERROR), and the same call once the fault clears answers
// OK, and a cut right after that answer keeps it: the failed sync's
// dropped pages are written again, not taken for synced.
func TestSweepIOFaults(t *testing.T) {
	m := mount(t)
	bin, _ := binaries(t)
	calls := sweepSequence(legacyFile(t))
	steps := sweepReference(t, m, "fault-ref", true, false, calls[:3])
	st := steps[2] // the upsert with a body of several writes
	upsert := func(dir string) string {
		return answer(run(t, nil, bin, sweepArgv(st.call, filepath.Join(dir, statePath))...))
	}
	injected, answers := faultRun(t, m, "fault", st.before, upsert, func(kind, name, dir, got string) {
		live := m.FS.Current().Lookup(name)
		ok := strings.HasPrefix(got, "OK")
		switch {
		case ok && !sameFile(live.Lookup(statePath), st.after.Lookup(statePath)):
			t.Errorf("%s (%s): answered %s but the state file is not the call's", name, kind, got)
		case !ok && !strings.HasPrefix(got, "ERROR") && !(kind == "EIO on read" && strings.HasPrefix(got, "CORRUPT")):
			t.Errorf("%s (%s): answered %s", name, kind, got)
		case !ok && !sameFile(live.Lookup(statePath), st.before.Lookup(statePath)) &&
			!(kind == "EIO on fsync" && sameFile(live.Lookup(statePath), st.after.Lookup(statePath))):
			t.Errorf("%s (%s): answered %s and changed the state file", name, kind, got)
		}
		// The fault has cleared: the call works, and its answer survives
		// a cut right after it.
		if again := upsert(dir); !strings.HasPrefix(again, "OK") {
			t.Errorf("%s (%s): the call after the fault answers %s", name, kind, again)
		}
		durable := m.FS.Durable().Lookup(name).Lookup(statePath)
		if !sameFile(durable, m.FS.Current().Lookup(name).Lookup(statePath)) {
			t.Errorf("%s (%s): a cut right after the call that followed the fault loses it", name, kind)
		}
	})
	logFaults(t, "sweep", injected, answers)
}

// TestLedgerIOFaults is proof (d) for task-state-guard, through SQLite's
// own I/O: a create whose k-th write, fsync or read fails answers an error
// class of the spec or ok; an error leaves every task as it was, an ok is
// the call's whole effect and survives a cut right after it; the same call
// once the fault clears answers ok, the doctor is healthy, and a cut right
// after keeps it.
func TestLedgerIOFaults(t *testing.T) {
	m := mount(t)
	_, bin := binaries(t)
	seq := ledgerSequence(false)
	steps := ledgerReference(t, m, "fault-ref", refOpts{makeDirs: true}, seq[:3])
	base := steps[2].after
	c := ledgerCall{args: []string{"create", "--task-id", taskC, "--timeout-seconds", "30"}, now: seq[2].now + 1}
	tasks := []string{taskA, taskB, taskC}
	view := func(tree *crashfs.Node) ledgerView { return viewTasks(t, bin, tree, tasks) }
	before := view(base)
	var after ledgerView
	create := func(dir string) string {
		return answer(run(t, c.env(), bin, ledgerArgv(c, filepath.Join(dir, dbPath))...))
	}
	injected, answers := faultRun(t, m, "fault", base, create, func(kind, name, dir, got string) {
		live := view(m.FS.Current().Lookup(name))
		ok := strings.Contains(got, `"ok":true`)
		switch {
		case !live.healthy:
			t.Errorf("%s (%s): answered %s, then the doctor answers %s", name, kind, got, live.doctor)
		case ok && live.tasks == before.tasks:
			t.Errorf("%s (%s): answered %s but the task is not there", name, kind, got)
		case !ok && !strings.Contains(got, "InternalError") && !strings.Contains(got, "StateConflict"):
			t.Errorf("%s (%s): answered %s", name, kind, got)
		case !ok && live.tasks != before.tasks:
			t.Errorf("%s (%s): answered %s but the call took effect:\n%s", name, kind, got, live.tasks)
		}
		if ok {
			if d := view(m.FS.Durable().Lookup(name)); d.tasks != live.tasks {
				t.Errorf("%s (%s): answered %s, and a cut right then loses it", name, kind, got)
			}
		}
		again := create(dir)
		if !strings.Contains(again, `"ok":true`) {
			t.Errorf("%s (%s): the call after the fault answers %s", name, kind, again)
			return
		}
		live = view(m.FS.Current().Lookup(name))
		if after.tasks == "" {
			after = live
		}
		d := view(m.FS.Durable().Lookup(name))
		if !live.healthy || live.tasks != after.tasks || d.tasks != live.tasks || !d.healthy {
			t.Errorf("%s (%s): after the call that followed the fault: live %s\n%s\ndurable %s\n%s", name, kind, live.doctor, live.tasks, d.doctor, d.tasks)
		}
	})
	logFaults(t, "ledger", injected, answers)
}

// TestLedgerWALFsyncFailure pins what the ledger answers when SQLite's
// fsync of the -wal at commit fails (SQLITE_IOERR_FSYNC): InternalError,
// exit 3, and with the explain switch a fixed reason naming no path; the task is not there, live or after
// a cut; the same call afterwards answers ok and survives a cut, although
// the failed fsync dropped what it covered (crashfs drops it as Linux
// may after a write-back error).
func TestLedgerWALFsyncFailure(t *testing.T) {
	m := mount(t)
	_, bin := binaries(t)
	seq := ledgerSequence(false)
	steps := ledgerReference(t, m, "ref", refOpts{makeDirs: true}, seq[:1])
	dir := scenario(t, m, "wal-fsync", steps[0].after)
	db := filepath.Join(dir, dbPath)
	c := ledgerCall{args: []string{"create", "--task-id", taskC}, now: seq[0].now + 1}
	ft := &crashfs.Fault{Op: "fsync", Nth: 1, Errno: syscall.EIO, Under: "wal-fsync/" + dbPath + "-wal"}
	m.FS.SetFault(ft)
	out, stderr, rc := runStderr(t, append(c.env(), ledgercli.ExplainEnv+"=1"), bin, ledgerArgv(c, db)...)
	m.FS.SetFault(nil)
	if ft.Fired() != 1 {
		t.Fatalf("the -wal's fsync failed %d times, want once; answer %s", ft.Fired(), answer(out, rc))
	}
	const want = `{"error":"InternalError","ok":false}`
	if strings.TrimSpace(out) != want || rc != 3 {
		t.Errorf("answer %s, want %s (exit 3)", answer(out, rc), want)
	}
	// The explanation names the step, never the path or SQLite's text.
	if why := "task-state-guard: InternalError: write failed\n"; stderr != why {
		t.Errorf("explanation %q, want %q", stderr, why)
	}
	ids := []string{taskA, taskC}
	notThere := answer(`{"error":"TaskNotFound","ok":false}`, 2)
	for what, tree := range map[string]*crashfs.Node{"live": m.FS.Current().Lookup("wal-fsync"), "after a cut": m.FS.Durable().Lookup("wal-fsync")} {
		v := viewTasks(t, bin, tree, ids)
		if !v.healthy || !strings.HasSuffix(v.tasks, notThere) {
			t.Errorf("%s: doctor %s, tasks\n%s", what, v.doctor, v.tasks)
		}
	}
	out, rc = run(t, c.env(), bin, ledgerArgv(c, db)...)
	if rc != 0 {
		t.Fatalf("the call after the fault answers %s", answer(out, rc))
	}
	live := viewTasks(t, bin, m.FS.Current().Lookup("wal-fsync"), ids)
	cut := viewTasks(t, bin, m.FS.Durable().Lookup("wal-fsync"), ids)
	if !cut.healthy || cut.tasks != live.tasks || strings.Contains(live.tasks, notThere) {
		t.Errorf("after the call that followed the fault: live\n%s\nafter a cut %s\n%s", live.tasks, cut.doctor, cut.tasks)
	}
}

// TestLedgerWALFsyncFailureIsIOErrFsync: through the Go API (in a child
// process), the same fault reaches the caller as SQLite's
// SQLITE_IOERR_FSYNC inside an error with no contract class, so the CLI's
// InternalError above is that code's; the task is absent, and the same
// call afterwards succeeds on the same open ledger.
func TestLedgerWALFsyncFailureIsIOErrFsync(t *testing.T) {
	m := mount(t)
	dir := scenario(t, m, "api", nil)
	talk := startChild(t, "fsync "+filepath.Join(dir, dbPath))
	ft := &crashfs.Fault{Op: "fsync", Nth: 1, Errno: syscall.EIO, Under: "api/" + dbPath + "-wal"}
	m.FS.SetFault(ft)
	got := talk("create C")
	m.FS.SetFault(nil)
	if want := fmt.Sprintf("code %d classed false", sqlite3.SQLITE_IOERR_FSYNC); got != want || ft.Fired() != 1 {
		t.Errorf("child says %q (fault fired %d times), want %q", got, ft.Fired(), want)
	}
	if got := talk("get and create C again"); got != "get not found true, again <nil>" {
		t.Errorf("after the fault: %q", got)
	}
}
