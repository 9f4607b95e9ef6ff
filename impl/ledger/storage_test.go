//go:build linux || darwin

package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

func TestPathRules(t *testing.T) {
	for _, p := range []string{"", ":memory:", "a\x00b", `\\server\share\db`, "/"} {
		if _, err := Open(p, Options{AllowExternalACL: onWindows}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Open(%q): %v, want InvalidInput", p, err)
		}
	}
}

// TestTrailingColonIsAName: outside Windows a final name ending in ':' is
// an ordinary file name (only Windows reads "C:" as a drive).
func TestTrailingColonIsAName(t *testing.T) {
	p := filepath.Join(privateDir(t), "d", "tasks:")
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1)})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if info, err := os.Lstat(p); err != nil || !info.Mode().IsRegular() {
		t.Fatalf("no ledger at the path: %v", err)
	}
}

func TestMissingDirsCreatedPrivate(t *testing.T) {
	base := privateDir(t)
	p := filepath.Join(base, "a", "b", "ledger.sqlite")
	l, err := Open(p+"/", Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, d := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b")} {
		info, err := os.Stat(d)
		if err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", d, info.Mode(), err)
		}
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("db mode %v %v", info.Mode(), err)
	}
}

// MustExist refuses a missing database or directory and creates nothing
// (divergence L7), and opens an existing ledger normally.
func TestMustExistCreatesNothing(t *testing.T) {
	base := privateDir(t)
	for _, p := range []string{
		filepath.Join(base, "a", "b", "ledger.sqlite"),
		filepath.Join(base, "ledger.sqlite"),
	} {
		_, err := Open(p, Options{AllowExternalACL: onWindows, MustExist: true})
		if !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: %v, want ErrInvalidInput", p, err)
		}
	}
	if left, _ := os.ReadDir(base); len(left) != 0 {
		t.Fatalf("MustExist created %v", left)
	}
	p := filepath.Join(base, "ledger.sqlite")
	l, err := Open(p, Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = Open(p, Options{AllowExternalACL: onWindows, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

func TestSymlinkedParentAccepted(t *testing.T) {
	base := privateDir(t)
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	l, err := Open(filepath.Join(link, "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatalf("symlinked parent: %v", err)
	}
	l.Close()
	if _, err := os.Lstat(filepath.Join(real, "ledger.sqlite")); err != nil {
		t.Fatalf("db not in resolved dir: %v", err)
	}
}

// snapshotDir records names, modes and bytes of every file in dir.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, _ := os.Lstat(p)
		data, _ := os.ReadFile(p)
		out[e.Name()] = info.Mode().String() + string(data)
	}
	return out
}

func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func newLedgerFile(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "ledger.sqlite")
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	return p
}

func TestStorageRefusals(t *testing.T) {
	cases := map[string]func(t *testing.T, dir, db string) string{
		"symlinked db": func(t *testing.T, dir, db string) string {
			link := filepath.Join(dir, "link.sqlite")
			os.Symlink(db, link)
			return link
		},
		"hardlinked db": func(t *testing.T, dir, db string) string {
			os.Link(db, filepath.Join(dir, "alias.sqlite"))
			return db
		},
		"symlinked wal": func(t *testing.T, dir, db string) string {
			os.WriteFile(filepath.Join(dir, "elsewhere"), nil, 0o600)
			os.Symlink(filepath.Join(dir, "elsewhere"), db+"-wal")
			return db
		},
		"hardlinked shm": func(t *testing.T, dir, db string) string {
			os.WriteFile(filepath.Join(dir, "other"), nil, 0o600)
			os.Link(filepath.Join(dir, "other"), db+"-shm")
			return db
		},
		"group-writable dir": func(t *testing.T, dir, db string) string {
			os.Chmod(dir, 0o770)
			return db
		},
		"db is a directory": func(t *testing.T, dir, db string) string {
			d := filepath.Join(dir, "d.sqlite")
			os.Mkdir(d, 0o700)
			return d
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			dir := privateDir(t)
			db := newLedgerFile(t, dir)
			target := setup(t, dir, db)
			before := snapshotDir(t, dir)
			for _, ro := range []bool{false, true} {
				l, err := Open(target, Options{AllowExternalACL: onWindows, ReadOnly: ro})
				if err == nil {
					l.Close()
					t.Fatalf("read-only=%v: accepted", ro)
				}
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("read-only=%v: %v, want InvalidInput", ro, err)
				}
			}
			if !sameSnapshot(before, snapshotDir(t, dir)) {
				t.Errorf("refused open changed the directory")
			}
		})
	}
}

func TestNonStickyWritableAncestor(t *testing.T) {
	base := privateDir(t)
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	leaf := filepath.Join(open, "leaf")
	os.Mkdir(leaf, 0o700)
	_, err := Open(filepath.Join(leaf, "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	wantClass(t, err, ErrInvalidInput)
	if _, err := os.Lstat(filepath.Join(leaf, "ledger.sqlite")); err == nil {
		t.Fatal("refused open created the file")
	}
	os.Chmod(open, 0o777|os.ModeSticky)
	l, err := Open(filepath.Join(leaf, "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatalf("sticky ancestor: %v", err)
	}
	l.Close()
}

func TestTightensModes(t *testing.T) {
	dir := privateDir(t)
	db := newLedgerFile(t, dir)
	os.Chmod(db, 0o644)
	if l, err := Open(db, Options{AllowExternalACL: onWindows, ReadOnly: true}); !errors.Is(err, ErrInvalidInput) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("read-only open of 0644 file: %v", err)
	}
	if info, _ := os.Stat(db); info.Mode().Perm() != 0o644 {
		t.Fatal("read-only open tightened the file")
	}
	l, err := Open(db, Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if info, _ := os.Stat(db); info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", info.Mode())
	}
	os.Chmod(db+"-wal", 0o644)
	if _, err := l.Create(CreateParams{Internal: true}); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(db + "-wal"); info.Mode().Perm() != 0o600 {
		t.Fatalf("wal mode %v", info.Mode())
	}
}

// TestReplacedBetweenOperations renames another file over the database
// while it is open: the next operation refuses and writes nothing.
func TestReplacedBetweenOperations(t *testing.T) {
	dir := privateDir(t)
	db := newLedgerFile(t, dir)
	other := newLedgerFile(t, privateDir(t))
	l, err := Open(db, Options{AllowExternalACL: onWindows, Clock: fixedClock(2000)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Rename(other, db); err != nil {
		t.Fatal(err)
	}
	before := fileSHA(t, db)
	_, err = l.Create(CreateParams{Internal: true})
	wantClass(t, err, ErrStateConflict)
	_, err = l.reconcileFloat(0, 0, false)
	wantClass(t, err, ErrStateConflict)
	_, err = l.Doctor()
	wantClass(t, err, ErrStateConflict)
	if fileSHA(t, db) != before {
		t.Fatal("replacement file changed")
	}
	// A symlink put in its place is refused too.
	os.Remove(db)
	os.Symlink(other, db)
	_, err = l.Get("00000000-0000-4000-8000-000000000001")
	wantClass(t, err, ErrInvalidInput)
}

// TestReadOnlySidecarRules: a rollback journal refuses a read-only open; a
// lone -wal (here an empty one) and a complete pair are read.
func TestReadOnlySidecarRules(t *testing.T) {
	dir := privateDir(t)
	db := newLedgerFile(t, dir)
	os.WriteFile(db+"-journal", []byte("x"), 0o600)
	_, err := Open(db, Options{AllowExternalACL: onWindows, ReadOnly: true})
	wantClass(t, err, ErrStateConflict)
	os.Remove(db + "-journal")
	os.WriteFile(db+"-wal", nil, 0o600)
	l, err := Open(db, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatalf("lone empty -wal: %v", err)
	}
	l.Close()
	os.Remove(db + "-wal")

	w, err := Open(db, Options{AllowExternalACL: onWindows, Clock: fixedClock(3000)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ro, err := Open(db, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(3000)})
	if err != nil {
		t.Fatalf("read-only beside a writer: %v", err)
	}
	defer ro.Close()
	if _, err := w.Create(CreateParams{Internal: true}); err != nil {
		t.Fatal(err)
	}
	rep, err := ro.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 2 {
		t.Fatalf("second read-only doctor on the same file: %s %v", reportJSON(rep), err)
	}
	// The writer still works after the reader opened and read the file
	// (its locks were not dropped).
	if _, err := w.Create(CreateParams{Internal: true}); err != nil {
		t.Fatal(err)
	}
}

func TestReadOnlyMissingFile(t *testing.T) {
	dir := privateDir(t)
	_, err := Open(filepath.Join(dir, "none.sqlite"), Options{AllowExternalACL: onWindows, ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
	_, err = Open(filepath.Join(dir, "nodir", "none.sqlite"), Options{AllowExternalACL: onWindows, ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatal("read-only open created something")
	}
}

// TestOddPathCharacters: characters that mean something in a SQLite URI
// are escaped, so the ledger lands exactly at the path given.
func TestOddPathCharacters(t *testing.T) {
	dir := filepath.Join(privateDir(t), "a b?c#d%20e&f=g")
	p := filepath.Join(dir, "l?mode=ro#x.sqlite")
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Create(CreateParams{Internal: true}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if info, err := os.Lstat(p); err != nil || info.Size() == 0 {
		t.Fatalf("ledger not at the given path: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("unexpected files: %v", entries)
	}
	ro, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if rep, err := ro.Doctor(); err != nil || rep.TaskCount != 1 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
}

// TestPageCacheBounded: every connection runs with the bounded page cache
// of spec/task-state-guard.md §10 (SQLite's default would be 2000 KiB, so a missing
// setting shows). A read-only one also runs with every other setting its
// open reads back: busy timeout, foreign keys, temporary storage in
// memory and query_only.
func TestPageCacheBounded(t *testing.T) {
	p := filepath.Join(privateDir(t), "cache.sqlite")
	l, err := Open(p, Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.pragmaInt("PRAGMA cache_size")
	l.Close()
	if err != nil || got != cacheSizeKiB {
		t.Fatalf("writable cache_size %d %v, want %d", got, err, cacheSizeKiB)
	}
	ro, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, BusyTimeout: 1234 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for q, want := range map[string]int{
		"PRAGMA cache_size":   cacheSizeKiB,
		"PRAGMA busy_timeout": 1234,
		"PRAGMA foreign_keys": 1,
		"PRAGMA temp_store":   2,
		"PRAGMA query_only":   1,
	} {
		if got, err := ro.pragmaInt(q); err != nil || got != want {
			t.Errorf("read-only %s: %d %v, want %d", q, got, err, want)
		}
	}
}

// TestNonStickyWritableAncestorAboveMissingDirs: when the directories below
// a world-writable, non-sticky directory are still missing, that directory
// is an ancestor of the database's directory all the same, and another
// user could rename the directories the open is about to create.
func TestNonStickyWritableAncestorAboveMissingDirs(t *testing.T) {
	base := privateDir(t)
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	l, err := Open(filepath.Join(open, "new", "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if l != nil {
		l.Close()
	}
	wantClass(t, err, ErrInvalidInput)
	if _, err := os.Lstat(filepath.Join(open, "new")); err == nil {
		t.Fatal("refused open created a directory")
	}
}

// TestMissingDirCreatedMeanwhileByAnother: a missing directory that another
// user creates, world-writable and not sticky, between the checks and the
// open's mkdir is an ancestor of the database's directory like any other
// and is refused.
func TestMissingDirCreatedMeanwhileByAnother(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a directory owned by another user")
	}
	base := privateDir(t)
	stickyDir := filepath.Join(base, "sticky")
	os.Mkdir(stickyDir, 0o700)
	os.Chmod(stickyDir, 0o777|os.ModeSticky)
	planted := filepath.Join(stickyDir, "new")
	plantForeignDir(t, planted)
	l, err := Open(filepath.Join(planted, "sub", "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if l != nil {
		l.Close()
	}
	wantClass(t, err, ErrInvalidInput)
	// Refused before anything was made inside the planted directory.
	if _, err := os.Lstat(filepath.Join(planted, "sub")); err == nil {
		t.Error("a directory was created inside the planted one before it was checked")
	}

	// Planted as the last missing directory, it answers to the final
	// directory's rules (owner first), not only to the ancestors' rules.
	last := filepath.Join(stickyDir, "last")
	plantForeignDir(t, last)
	l, err = Open(filepath.Join(last, "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if l != nil {
		l.Close()
	}
	wantClass(t, err, ErrInvalidInput)
	if err == nil || !strings.Contains(err.Error(), "not owned by the effective user") {
		t.Errorf("last directory planted by another user: %v, want the final directory's owner rule", err)
	}
}

// plantForeignDir makes the open that is about to create target find it
// already made, world-writable and owned by nobody (uid 65534), as another
// user racing the open would leave it.
func plantForeignDir(t *testing.T, target string) {
	storageguard.Hooks.BeforeMakeDir = func(dir string) {
		if dir == target {
			os.Mkdir(target, 0o700)
			os.Chmod(target, 0o777)
			os.Chown(target, 65534, 65534)
		}
	}
	t.Cleanup(func() { storageguard.Hooks.BeforeMakeDir = nil })
}

// TestDotDotAfterSymlinkedParent: ".." after a symlinked directory names the
// parent of the link's target, as the kernel, realpath and the reference's
// canonicalisation read it, not the directory holding the link.
func TestDotDotAfterSymlinkedParent(t *testing.T) {
	base := privateDir(t)
	deep := filepath.Join(base, "real", "deep")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	p := base + "/link/../ledger.sqlite"
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1)})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Lstat(filepath.Join(base, "real", "ledger.sqlite")); err != nil {
		t.Errorf("no ledger where the path leads: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "ledger.sqlite")); err == nil {
		t.Error("ledger made beside the link, where the path does not lead")
	}
	// A missing directory followed by ".." is read lexically, as realpath
	// does for names that do not exist.
	l, err = Open(base+"/real/new/../other.sqlite", Options{AllowExternalACL: onWindows, Clock: fixedClock(1)})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Lstat(filepath.Join(base, "real", "other.sqlite")); err != nil {
		t.Errorf("missing/.. not read lexically: %v", err)
	}
}

// TestDoubleSlashIsNotUNC: outside Windows a path that starts with "//" is
// an ordinary absolute path (POSIX reads "//x" as "/x" on Linux), not a
// UNC path.
func TestDoubleSlashIsNotUNC(t *testing.T) {
	if os.PathSeparator == '\\' {
		t.Skip("on Windows // starts a UNC path")
	}
	p := "/" + filepath.Join(privateDir(t), "ledger.sqlite")
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1)})
	if err != nil {
		t.Fatalf("Open(%q): %v", p, err)
	}
	l.Close()
}

// TestDotDotPastMissingDirs: among directories that do not exist yet, ".."
// drops the name before it, and one more ".." climbs above the deepest
// existing directory, as realpath reads a path it cannot resolve.
func TestDotDotPastMissingDirs(t *testing.T) {
	base := privateDir(t)
	p := filepath.Join(base, "nope") + "/../../" + filepath.Base(base) + "/sub/ledger.sqlite"
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1)})
	if err != nil {
		t.Fatalf("Open(%q): %v", p, err)
	}
	l.Close()
	if _, err := os.Lstat(filepath.Join(base, "sub", "ledger.sqlite")); err != nil {
		t.Errorf("no ledger where the path leads: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "nope")); err == nil {
		t.Error("a directory was made for a name that '..' removed")
	}
}

// TestMissingDirectoryUnderRoot: a read-only open below a directory that
// does not exist right under "/" says the directory does not exist (the
// walk up stops at "/"), not that the path cannot be resolved.
func TestMissingDirectoryUnderRoot(t *testing.T) {
	if os.PathSeparator == '\\' {
		t.Skip("POSIX root")
	}
	p := "/stateguard-test-no-such-dir-5f1c/ledger.sqlite"
	if _, err := os.Lstat(filepath.Dir(p)); err == nil {
		t.Skipf("%s exists here", filepath.Dir(p))
	}
	_, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
	if err == nil || !strings.Contains(err.Error(), "database directory does not exist") {
		t.Errorf("got %v, want the missing directory named as such", err)
	}
}

// TestMissingDirsSyncedIntoTheirParents (L6): each directory the open
// makes is synced into its parent before anything is made inside it (a
// new entry survives a power cut only once its directory is synced), so
// the database, whose -wal SQLite syncs into the last directory, is not
// lost with a directory entry that never reached the disk.
func TestMissingDirsSyncedIntoTheirParents(t *testing.T) {
	base := privateDir(t)
	var synced []string
	storageguard.Hooks.SyncParentDir = func(d string) error {
		if _, err := os.Lstat(filepath.Join(base, "a", "b", "ledger.sqlite")); err == nil {
			t.Errorf("synced %s after the database was created", d)
		}
		synced = append(synced, d)
		return nil
	}
	defer func() { storageguard.Hooks.SyncParentDir = nil }()
	l, err := Open(filepath.Join(base, "a", "b", "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	want := []string{base, filepath.Join(base, "a")}
	if strings.Join(synced, "\n") != strings.Join(want, "\n") {
		t.Fatalf("synced %q, want %q", synced, want)
	}
	synced = nil
	if l, err = Open(filepath.Join(base, "a", "b", "ledger.sqlite"), Options{AllowExternalACL: onWindows}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if len(synced) != 0 {
		t.Errorf("existing directories synced again: %q", synced)
	}
	boom := errors.New("injected I/O error")
	storageguard.Hooks.SyncParentDir = func(string) error { return boom }
	_, err = Open(filepath.Join(base, "c", "ledger.sqlite"), Options{AllowExternalACL: onWindows})
	var ie *internalError
	if !errors.As(err, &ie) || !errors.Is(err, boom) {
		t.Errorf("failed directory sync: %v, want InternalError", err)
	}
}
