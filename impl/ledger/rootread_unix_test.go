//go:build linux || darwin

package ledger

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// foreignUID owns the ledger root reads in these tests (nobody).
const foreignUID = 65534

// needRoot skips a test that must chown to another user, outside CI, and
// fails it under CI=true, where the suite runs as root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("needs root (CI runs as root) to give a ledger to another user")
	}
	t.Skip("needs root to give a ledger to another user")
}

// dirState renders every entry of dir with its type, mode, owner and
// content hash, so that any change a read makes shows.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, name := range append([]string{"."}, func() []string {
		var n []string
		for _, e := range entries {
			n = append(n, e.Name())
		}
		return n
	}()...) {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		sum := ""
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		lines = append(lines, fmt.Sprintf("%s %v %d:%d %s", name, fi.Mode(), st.Uid, st.Gid, sum))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// foreignLedger makes a ledger of a few tasks (one running, one ended with
// a pending delivery), leaves its -wal beside it, and gives the directory
// and every file in it to foreignUID.
func foreignLedger(t *testing.T) (dir, db string, ids []string) {
	t.Helper()
	needRoot(t)
	l, clk, p := openTest(t)
	root, _ := l.Create(timeoutSeconds(CreateParams{}, 5))
	child, _ := l.Create(CreateParams{ParentID: root.ID})
	l.Start(root.ID)
	clk.now = 1010
	l.CloseTask(child.ID, StatusSucceeded, "")
	// Another connection keeps the -wal and -shm beside the file, as a
	// live worker would.
	keep, err := Open(p, withClockSeconds(Options{}, clk.read))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keep.Close() })
	if _, err := keep.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Dir(p)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if err := os.Lchown(filepath.Join(dir, e.Name()), foreignUID, foreignUID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, foreignUID, foreignUID); err != nil {
		t.Fatal(err)
	}
	return dir, p, []string{root.ID, child.ID}
}

// Root reads a ledger another user owns: every read-only operation
// answers, and nothing in its directory changes (no file made, no mode or
// owner changed, no byte written).
func TestRootReadsAnotherUsersLedger(t *testing.T) {
	dir, db, ids := foreignLedger(t)
	before := dirState(t, dir)
	if !strings.Contains(before, "ledger.sqlite-wal") {
		t.Fatalf("the -wal is not there to be read:\n%s", before)
	}
	l, err := Open(db, Options{ReadOnly: true, Clock: fixedClock(2000)})
	if err != nil {
		t.Fatalf("root's read-only open: %v", err)
	}
	defer l.Close()
	rep, err := l.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 3 {
		t.Fatalf("doctor: %+v, %v", rep, err)
	}
	reads := map[string]func() error{
		"get":      func() error { _, err := l.Get(ids[0]); return err },
		"children": func() error { _, err := l.ChildrenOf(ids[0]); return err },
		"history":  func() error { _, err := l.History(ids[1]); return err },
		"list":     func() error { _, err := l.List(ListFilter{Limit: 10}); return err },
		"metrics": func() error {
			m, err := l.Metrics(MetricsOptions{})
			if err == nil && (!m.StuckKnown || m.RunningPastDeadline != 1) {
				err = fmt.Errorf("metrics %+v", m)
			}
			return err
		},
		"reconcile dry run": func() error {
			r, err := l.Reconcile(ReconcileOptions{DryRun: true})
			if err == nil && r.TasksTimedOut != 1 {
				err = fmt.Errorf("dry run %+v", r)
			}
			return err
		},
		"prune dry run": func() error { _, err := l.Prune(PruneOptions{EndedBefore: timeAt(5000), DryRun: true}); return err },
	}
	for name, read := range reads {
		if err := read(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The read-only ledger refuses every write, as anywhere.
	if _, err := l.Create(CreateParams{}); !errors.Is(err, ErrStateConflict) {
		t.Errorf("create through the read-only ledger: %v", err)
	}
	l.Close()
	if after := dirState(t, dir); after != before {
		t.Fatalf("root's reads changed the directory:\n%s\nwas:\n%s", after, before)
	}
}

// Every writable open by root of another user's ledger stays refused,
// before anything is touched; and a read-only open by anyone but root
// still needs the directory to be its own.
func TestRootWritesToAnotherUsersLedgerAreRefused(t *testing.T) {
	dir, db, _ := foreignLedger(t)
	before := dirState(t, dir)
	for _, opts := range []Options{{}, {MustExist: true}} {
		l, err := Open(db, opts)
		if l != nil {
			l.Close()
		}
		if !errors.Is(err, ErrInvalidInput) || Reason(err) != "database directory is not owned by the effective user" {
			t.Errorf("writable open %+v: %v", opts, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "new.sqlite"), Options{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a new ledger in the foreign directory: %v", err)
	}
	// Another non-root user: the read-only exception is root's alone.
	defer func(prev func() int) { storageguard.Hooks.EffectiveUID = prev }(storageguard.Hooks.EffectiveUID)
	storageguard.Hooks.EffectiveUID = func() int { return 1000 }
	l, err := Open(db, Options{ReadOnly: true})
	if l != nil {
		l.Close()
	}
	if Reason(err) != "database directory is not owned by the effective user" {
		t.Errorf("read-only open by a non-root user: %v", err)
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("refused opens changed the directory:\n%s\nwas:\n%s", after, before)
	}
}

// Root's read follows no link: a symbolic link to the ledger, planted in
// the foreign directory or naming it, is refused, as are sidecars that are
// links; a file that is not private is refused, not re-permissioned.
func TestRootReadFollowsNoLinkAndChangesNoMode(t *testing.T) {
	dir, db, _ := foreignLedger(t)
	link := filepath.Join(dir, "link.sqlite")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, foreignUID, foreignUID)
	linkedDir := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(dir, linkedDir); err != nil {
		t.Fatal(err)
	}
	for p, reason := range map[string]string{
		link: "database path is not a regular file",
		filepath.Join(linkedDir, "ledger.sqlite"): "another user's database directory is reached through a link",
	} {
		l, err := Open(p, Options{ReadOnly: true})
		if l != nil {
			l.Close()
		}
		if !errors.Is(err, ErrInvalidInput) || Reason(err) != reason {
			t.Errorf("%s: %v, want %q", p, err, reason)
		}
	}
	os.Remove(link)
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Open(db, Options{ReadOnly: true})
	if l != nil {
		l.Close()
	}
	if Reason(err) != "database file mode is not private" {
		t.Errorf("a readable-by-others file: %v", err)
	}
	if fi, _ := os.Stat(db); fi.Mode().Perm() != 0o644 {
		t.Errorf("root's read changed the mode to %v", fi.Mode().Perm())
	}
}
