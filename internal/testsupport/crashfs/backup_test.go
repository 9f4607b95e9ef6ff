//go:build linux

package crashfs_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/crashfs"
)

// backupPath is where the backup scenarios write their copy: below a
// directory the backup makes, beside the source's own.
const backupPath = "x/bk/copy.sqlite"

// TestBackupCutsLeaveWholeCopyOrNone is the power-loss proof for `backup
// --to` (spec 6.10): a cut after any operation of the backup leaves the
// source as it was (the CLI opens it read-only) and, at the target's
// path, either nothing or a whole copy: a healthy ledger holding the
// source's tasks. A copy the cut stopped part way must never sit at the
// target's path, where a restore would take it for a backup. A cut right
// after the answer keeps the whole copy (the call synced it). Torn
// variants (proof (c)) drop a seeded part of the unsynced changes.
func TestBackupCutsLeaveWholeCopyOrNone(t *testing.T) {
	m := mount(t)
	_, bin := binaries(t)
	ref := ledgerReference(t, m, "backup-ref", refOpts{makeDirs: true}, ledgerSequence(true)[:4])
	source := ref[len(ref)-1].afterView
	dir := filepath.Join(m.Dir, "backup-ref")
	argv := []string{"--db", filepath.Join(dir, dbPath), "backup", "--to", filepath.Join(dir, backupPath)}
	before := m.FS.Current().Lookup("backup-ref")
	ops := m.FS.Ops()
	if out, rc := run(t, nil, bin, argv...); rc != 0 {
		t.Fatalf("the reference backup answered %s", answer(out, rc))
	}
	n := m.FS.Ops() - ops

	whole, none, torn := 0, 0, 0
	check := func(name string, tree *crashfs.Node, acked bool) {
		t.Helper()
		if got := viewLedger(t, bin, tree); got != source {
			t.Errorf("%s: the source no longer reads as it did:\ndoctor %s\n%s", name, got.doctor, got.tasks)
		}
		if tree.Lookup(backupPath) == nil {
			if acked {
				t.Errorf("%s: a cut right after the answer lost the copy: %v", name, tree.Lookup("x/bk").Names())
			}
			none++
			return
		}
		got := viewAt(t, bin, tree, backupPath)
		if got != source {
			t.Errorf("%s: the target holds a copy that is not the source's whole ledger:\ndoctor %s\n%s\nsidecars beside it: %v",
				name, got.doctor, got.tasks, tree.Lookup("x/bk").Names())
			return
		}
		whole++
	}
	torn = cutEveryPoint(t, m, "backup", n, 8, before, bin, argv, dir, check)
	t.Logf("backup: %d operations; %d cut states hold no copy, %d a whole one (%d of them torn)", n, none, whole, torn)
}

// viewAt is viewLedger for a ledger at rel in the tree, read as the
// source's tasks.
func viewAt(t *testing.T, bin string, tree *crashfs.Node, rel string) ledgerView {
	t.Helper()
	db := filepath.Join(writeOut(t, tree), rel)
	out, rc := run(t, nil, bin, "--db", db, "doctor")
	v := ledgerView{healthy: rc == 0 && strings.Contains(out, `"healthy":true`), doctor: answer(out, rc)}
	var tasks []string
	for _, id := range ledgerTasks {
		tasks = append(tasks, answer(run(t, nil, bin, "--db", db, "get", id)))
	}
	v.tasks = strings.Join(tasks, "\n")
	return v
}

// TestRestoreCutsLeaveOldOrRestored is the power-loss proof for `restore
// --from` (spec 6.13): a ledger backed up after four calls and changed by
// two more is restored from that backup; a cut after any operation of the
// restore leaves at the ledger's path either the old ledger (as it read
// before the call) or the restored one (as the backup reads), never a mix
// and never a damaged file. A cut right after the answer keeps the restored
// one. Torn variants (proof (c)) drop a seeded part of the unsynced
// changes.
func TestRestoreCutsLeaveOldOrRestored(t *testing.T) {
	m := mount(t)
	_, bin := binaries(t)
	calls := ledgerSequence(true)
	ref := ledgerReference(t, m, "restore-ref", refOpts{makeDirs: true}, calls[:4])
	restored := ref[len(ref)-1].afterView
	dir := filepath.Join(m.Dir, "restore-ref")
	db := filepath.Join(dir, dbPath)
	if out, rc := run(t, nil, bin, "--db", db, "backup", "--to", filepath.Join(dir, backupPath)); rc != 0 {
		t.Fatalf("the backup answered %s", answer(out, rc))
	}
	for _, c := range calls[4:6] {
		if out, rc := run(t, c.env(), bin, ledgerArgv(c, db)...); rc != 0 {
			t.Fatalf("%s answered %s", c.name(), answer(out, rc))
		}
	}
	m.FS.SyncAll()
	before := m.FS.Current().Lookup("restore-ref")
	old := viewLedger(t, bin, before)
	if old == restored || !old.healthy || !restored.healthy {
		t.Fatalf("the old ledger and the backup must differ and be healthy:\nold %s\nbackup %s", old.doctor, restored.doctor)
	}
	argv := []string{"--db", db, "restore", "--from", filepath.Join(dir, backupPath)}
	ops := m.FS.Ops()
	if out, rc := run(t, nil, bin, argv...); rc != 0 {
		t.Fatalf("the reference restore answered %s", answer(out, rc))
	}
	n := m.FS.Ops() - ops
	if got := viewLedger(t, bin, m.FS.Current().Lookup("restore-ref")); got != restored {
		t.Fatalf("the reference restore left:\ndoctor %s\n%s", got.doctor, got.tasks)
	}

	oldCount, newCount, torn := 0, 0, 0
	check := func(name string, tree *crashfs.Node, acked bool) {
		t.Helper()
		switch got := viewLedger(t, bin, tree); got {
		case restored:
			newCount++
		case old:
			if acked {
				t.Errorf("%s: a cut right after the answer lost the restore", name)
			}
			oldCount++
		default:
			t.Errorf("%s: the ledger is neither the old one nor the backup:\ndoctor %s\n%s\nfiles beside it: %v",
				name, got.doctor, got.tasks, tree.Lookup("x/y").Names())
		}
	}
	torn = cutEveryPoint(t, m, "restore", n, 10, before, bin, argv, dir, check)
	t.Logf("restore: %d operations; %d cut states hold the old ledger, %d the restored one (%d of them torn)", n, oldCount, newCount, torn)
}

// cutEveryPoint runs the command argv (its paths under dir) once per
// sampled cut point of its n operations, each in a fresh scenario made
// from before, and
// hands check the tree the cut left, then trees of its torn writes; it
// returns how many torn trees it checked.
func cutEveryPoint(t *testing.T, m *crashfs.Mount, kind string, n, sample int, before *crashfs.Node,
	bin string, argv []string, dir string, check func(what string, tree *crashfs.Node, last bool)) int {
	t.Helper()
	torn := 0
	for _, k := range cutPoints(n, sample) {
		name := fmt.Sprintf("%s-cut-%d", kind, k)
		d := scenario(t, m, name, before)
		m.FS.ArmCut(k)
		run(t, nil, bin, strings.Split(strings.ReplaceAll(strings.Join(argv, "\x00"), dir, d), "\x00")...)
		cut := m.FS.Cut()
		log := m.FS.Log()
		m.FS.Disarm()
		if cut == nil {
			t.Fatalf("%s: the %s made fewer than %d operations this time: %q", name, kind, k, log)
		}
		check(fmt.Sprintf("%s after %q", name, log), cut.Lookup(name), k == n)
		for j := 0; j < tornPerCut(t) && m.FS.TornFiles() > 0; j++ {
			seed := tornSeed(name, j)
			tree, kept := m.FS.TornCut(seed)
			torn++
			check(fmt.Sprintf("%s torn with seed %d (%s)", name, seed, kept), tree.Lookup(name), false)
		}
	}
	return torn
}
