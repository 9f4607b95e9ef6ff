package durable

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// recordOps wraps the real durability steps so that each one appends its
// name to *log before it runs.
func recordOps(log *[]string) Ops {
	real := DefaultOps()
	return Ops{
		SyncFile: func(f *os.File) error { *log = append(*log, "sync file"); return real.SyncFile(f) },
		Rename: func(o, n string) error {
			*log = append(*log, "rename")
			return real.Rename(o, n)
		},
		SyncDir: func(d string) error { *log = append(*log, "sync directory"); return real.SyncDir(d) },
	}
}

// TestWriteSyncsInOrder pins D3: the temporary file is written, synced,
// renamed over the state file, and then the directory is synced. Dropping
// either sync, or moving the file sync after the rename, fails here.
func TestWriteSyncsInOrder(t *testing.T) {
	var log []string
	defer SetOps(recordOps(&log))()
	p := filepath.Join(t.TempDir(), "state.yml")
	write := func(w io.Writer) error {
		log = append(log, "write")
		_, err := io.WriteString(w, "new\n")
		return err
	}
	if err := WriteFileFunc(p, write); err != nil {
		t.Fatal(err)
	}
	want := []string{"write", "sync file", "rename", "sync directory"}
	if !slices.Equal(log, want) {
		t.Fatalf("steps %q, want %q", log, want)
	}
}

// TestDefaultOpsReallySync: the real steps act on the file system (a no-op
// stand-in would accept a closed file and a missing directory).
func TestDefaultOpsReallySync(t *testing.T) {
	d := DefaultOps()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SyncFile(f); err != nil {
		t.Fatalf("sync of an open file: %v", err)
	}
	f.Close()
	if err := d.SyncFile(f); !errors.Is(err, os.ErrClosed) {
		t.Errorf("SyncFile of a closed file: %v, want os.ErrClosed", err)
	}
	if err := d.SyncDir(filepath.Join(t.TempDir(), "missing")); err == nil && syncDirChecksPath {
		t.Error("SyncDir of a missing directory succeeded: it does not open the directory")
	}
}

// TestFailedSyncKeepsOldFile: when a sync or the rename fails, the write
// reports the error, the old file is untouched and no temporary file stays.
// A failed directory sync comes after the rename: the new file is in place,
// but the caller is told the write may not survive a power cut.
func TestFailedSyncKeepsOldFile(t *testing.T) {
	boom := errors.New("injected I/O error")
	for _, step := range []string{"sync file", "rename", "sync directory"} {
		t.Run(step, func(t *testing.T) {
			o := DefaultOps()
			switch step {
			case "sync file":
				o.SyncFile = func(*os.File) error { return boom }
			case "rename":
				o.Rename = func(string, string) error { return boom }
			case "sync directory":
				o.SyncDir = func(string) error { return boom }
			}
			restore := SetOps(o)
			dir := t.TempDir()
			p := filepath.Join(dir, "state.yml")
			if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			err := WriteFileFunc(p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
			restore()
			if !errors.Is(err, boom) {
				t.Fatalf("error %v, want the injected one", err)
			}
			got, _ := os.ReadFile(p)
			want := "old"
			if step == "sync directory" {
				want = "new"
			}
			if string(got) != want {
				t.Errorf("content %q, want %q", got, want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("leftover files: %v", entries)
			}
		})
	}
}

// TestEnsureParentSyncsEachNewDirectory pins D3's first step: every
// directory EnsureParent makes has its parent synced right after the mkdir
// (a new entry survives a power cut only once its directory is synced),
// outermost first, so that nothing is written inside a directory whose
// own entry could still vanish. Directories that exist are not synced.
func TestEnsureParentSyncsEachNewDirectory(t *testing.T) {
	root := t.TempDir()
	var synced []string
	o := DefaultOps()
	o.SyncDir = func(d string) error {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("synced %s before it exists: %v", d, err)
		}
		synced = append(synced, d)
		return syncDir(d)
	}
	defer SetOps(o)()
	p := filepath.Join(root, "a", "b", "state.yml")
	if err := EnsureParent(p); err != nil {
		t.Fatal(err)
	}
	want := []string{root, filepath.Join(root, "a")}
	if !slices.Equal(synced, want) {
		t.Fatalf("synced %q, want %q", synced, want)
	}
	if fi, err := os.Stat(filepath.Join(root, "a", "b")); err != nil || !fi.IsDir() {
		t.Fatalf("a/b not made: %v", err)
	}
	synced = nil
	if err := EnsureParent(p); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 0 {
		t.Errorf("existing directories synced again: %q", synced)
	}
}

// TestEnsureParentSyncFailure: a parent that cannot be synced is an error
// (the directory might not survive a power cut), and a file where a
// directory should be is one too.
func TestEnsureParentSyncFailure(t *testing.T) {
	root := t.TempDir()
	boom := errors.New("injected I/O error")
	o := DefaultOps()
	o.SyncDir = func(string) error { return boom }
	restore := SetOps(o)
	err := EnsureParent(filepath.Join(root, "a", "state.yml"))
	restore()
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the injected one", err)
	}
	if err := os.WriteFile(filepath.Join(root, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := EnsureParent(filepath.Join(root, "f", "g", "state.yml")); err == nil {
		t.Error("a file in the parent path was accepted")
	}
}
