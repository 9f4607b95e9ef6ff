//go:build linux

package crashfs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/crashfs"
)

// mount mounts a fresh FS for the test and unmounts it at the end. Where
// FUSE is unavailable the test is skipped, except under CI=true, where it
// fails (CI machines have it).
func mount(t *testing.T) *crashfs.Mount {
	t.Helper()
	f := crashfs.New()
	m, err := f.Mount(t.TempDir())
	if errors.Is(err, crashfs.ErrUnavailable) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("FUSE is required under CI: %v", err)
		}
		t.Skipf("FUSE is unavailable here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return m
}

func write(t *testing.T, p, s string, sync bool) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func syncDir(t *testing.T, d string) {
	t.Helper()
	f, err := os.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

func data(n *crashfs.Node) string {
	if n == nil {
		return "<absent>"
	}
	return string(n.Data)
}

// TestStrictModel: the current state reads as written, while the durable
// state keeps a file's bytes only from its fsync on and a directory entry
// only from its directory's fsync on.
func TestStrictModel(t *testing.T) {
	m := mount(t)
	f, root := m.FS, m.Dir
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "a", "b", "f")
	write(t, p, "one", false)
	if got, _ := os.ReadFile(p); string(got) != "one" {
		t.Fatalf("current read %q", got)
	}
	if n := f.Durable().Lookup("a"); n != nil {
		t.Fatal("an unsynced mkdir is durable")
	}
	// The file's sync alone keeps nothing reachable.
	write(t, p, "two", true)
	syncDir(t, filepath.Join(root, "a", "b"))
	if n := f.Durable().Lookup("a/b/f"); n != nil {
		t.Fatal("an entry below an unsynced directory is durable")
	}
	syncDir(t, root)
	syncDir(t, filepath.Join(root, "a"))
	if got := data(f.Durable().Lookup("a/b/f")); got != "two" {
		t.Fatalf("durable after the syncs %q", got)
	}
	// A write without sync stays out; a rename stays out until the
	// directory is synced.
	write(t, p, "three", false)
	if got := data(f.Durable().Lookup("a/b/f")); got != "two" {
		t.Fatalf("unsynced write durable: %q", got)
	}
	q := filepath.Join(root, "a", "b", "g")
	write(t, q, "four", true)
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	if got := data(f.Durable().Lookup("a/b/f")); got != "two" {
		t.Fatalf("unsynced rename durable: %q", got)
	}
	syncDir(t, filepath.Join(root, "a", "b"))
	d := f.Durable()
	if got := data(d.Lookup("a/b/f")); got != "four" || d.Lookup("a/b/g") != nil {
		t.Fatalf("after the directory sync: %q, names %q", got, d.Names())
	}
	// Writing the tree out gives the same bytes.
	out := t.TempDir()
	if err := d.WriteOut(out); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "a", "b", "f")); string(got) != "four" {
		t.Fatalf("written out %q", got)
	}
}

// TestCutAtOperation: a cut armed at the k-th operation keeps the durable
// state of that moment, whatever comes later.
func TestCutAtOperation(t *testing.T) {
	m := mount(t)
	f, root := m.FS, m.Dir
	p := filepath.Join(root, "f")
	write(t, p, "old", true)
	syncDir(t, root)
	f.ArmCut(2) // truncate, write: the sync after them comes too late
	write(t, p, "new", true)
	if got := data(f.Cut().Lookup("f")); got != "old" {
		t.Fatalf("cut %q, log %q", got, f.Log())
	}
	f.ArmCut(3)
	write(t, p, "newer", true)
	if got := data(f.Cut().Lookup("f")); got != "newer" {
		t.Fatalf("cut %q, log %q", got, f.Log())
	}
}

// TestFaults: an armed fault fails the chosen operation with its errno and
// leaves the durable state as it was.
func TestFaults(t *testing.T) {
	m := mount(t)
	f, root := m.FS, m.Dir
	p := filepath.Join(root, "f")
	write(t, p, "old", true)
	syncDir(t, root)
	ft := &crashfs.Fault{Op: "fsync", Nth: 1, Errno: syscall.EIO}
	f.SetFault(ft)
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt([]byte("new"), 0)
	if err := h.Sync(); !errors.Is(err, syscall.EIO) {
		t.Errorf("fsync: %v, want EIO", err)
	}
	if got := data(f.Durable().Lookup("f")); got != "old" || ft.Fired() != 1 {
		t.Errorf("durable %q after a failed fsync, fired %d", got, ft.Fired())
	}
	// The failed fsync dropped what it covered: a later one that succeeds
	// makes only the later change durable, although the file reads whole.
	h.WriteAt([]byte("N"), 0)
	if err := h.Sync(); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if got := data(f.Durable().Lookup("f")); got != "Nld" {
		t.Errorf("durable %q after a failed and a good fsync, want the dropped bytes still old", got)
	}
	write(t, p, "new", true)
	f.SetFault(&crashfs.Fault{Op: "write", Nth: 1, Errno: syscall.ENOSPC})
	h, _ = os.OpenFile(p, os.O_RDWR, 0)
	if _, err := h.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("write: %v, want ENOSPC", err)
	}
	h.Close()
	f.SetFault(nil)
	if got, _ := os.ReadFile(p); !bytes.Equal(got, []byte("new")) {
		t.Errorf("current %q", got)
	}
}

// TestTornCut: beyond the strict model, a torn variant of a cut keeps a
// part of a file's unsynced changes: whole ones in order, the next cut at
// a sector, or changed sectors in any subset; never bytes that were not
// written (zeros where the file grew but the sector was not written).
// The same seed draws the same variant.
func TestTornCut(t *testing.T) {
	m := mount(t)
	f, root := m.FS, m.Dir
	p := filepath.Join(root, "f")
	old := bytes.Repeat([]byte{'o'}, 4*crashfs.SectorSize)
	write(t, p, string(old), true)
	syncDir(t, root)
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	f.ArmCut(3)
	h.WriteAt(bytes.Repeat([]byte{'a'}, 2*crashfs.SectorSize), 0)
	h.WriteAt(bytes.Repeat([]byte{'b'}, crashfs.SectorSize), 3*crashfs.SectorSize)
	h.WriteAt([]byte("c"), 4*crashfs.SectorSize) // the cut: three unsynced writes
	if data(f.Cut().Lookup("f")) != string(old) || f.TornFiles() != 1 {
		t.Fatalf("strict cut %q, torn files %d", data(f.Cut().Lookup("f")), f.TornFiles())
	}
	variants := map[string]bool{}
	for seed := uint64(0); seed < 64; seed++ {
		tree, kept := f.TornCut(seed)
		again, _ := f.TornCut(seed)
		got := data(tree.Lookup("f"))
		if got != data(again.Lookup("f")) {
			t.Fatalf("seed %d drew two variants", seed)
		}
		variants[got] = true
		for i := 0; i < len(got); i++ {
			sector := i / crashfs.SectorSize
			allowed := "o"
			switch {
			case sector < 2:
				allowed = "oa"
			case sector == 3:
				allowed = "ob"
			case sector == 4:
				allowed = "c\x00" // the size grew, the sector not written
			}
			if !strings.ContainsRune(allowed, rune(got[i])) {
				t.Fatalf("seed %d (%s): byte %d is %q", seed, kept, i, got[i])
			}
		}
		if len(got) != len(old) && len(got) != len(old)+1 {
			t.Fatalf("seed %d (%s): size %d", seed, kept, len(got))
		}
	}
	if len(variants) < 4 {
		t.Errorf("64 seeds drew only %d variants", len(variants))
	}
}
