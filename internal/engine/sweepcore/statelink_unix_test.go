//go:build unix

package sweepcore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritesKeepAStateLink: a state path that is a symbolic link stays
// one. A write through it replaces the file the link names (through a
// chain of links, relative or absolute, or a link whose file does not
// exist yet), under the lock beside that file, so the link and its
// target share state and lock: a lease taken through the link holds
// against a writer naming the target, and no lock file appears beside
// the link.
func TestWritesKeepAStateLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "state.yml")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	e := fixedEngine()
	if res := e.run(real, LeaseRelease{Writer: "w0"}); res.Word != WordOK {
		t.Fatalf("release on an absent file: %v", res.Word)
	}
	hop := filepath.Join(dir, "hop.yml")
	link := filepath.Join(dir, "state.yml")
	for _, l := range [][2]string{{"data/state.yml", hop}, {"hop.yml", link}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	if res := e.run(link, LeaseAcquire{Writer: "w1", Now: "2026-07-02T12:00:00Z"}); res.Word != WordOK {
		t.Fatalf("lease-acquire through the link: %v %s", res.Word, res.Reason)
	}
	if res := e.run(link, UpsertItem{Source: "s", ID: "1", JSON: `{"title": "t"}`, Writer: "w1", Now: "2026-07-02T12:01:00Z"}); res.Word != WordOK {
		t.Fatalf("upsert through the link: %v %s", res.Word, res.Reason)
	}
	for _, l := range []string{link, hop} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a link: %v %v", filepath.Base(l), fi, err)
		}
	}
	text, err := os.ReadFile(real)
	if err != nil || !strings.Contains(string(text), "writer: \"w1\"") || !strings.Contains(string(text), "\"s:1\"") {
		t.Fatalf("the target does not hold the writes: %q %v", text, err)
	}
	if res := e.run(real, LeaseAcquire{Writer: "w2", Now: "2026-07-02T12:02:00Z"}); res.Word != WordLocked {
		t.Fatalf("a writer naming the target: %v, want LOCKED", res.Word)
	}
	for _, l := range []string{link, hop} {
		if _, err := os.Lstat(l + ".lock"); err == nil {
			t.Errorf("a lock file beside %s", filepath.Base(l))
		}
	}
	if _, err := os.Stat(real + ".lock"); err != nil {
		t.Errorf("no lock beside the target: %v", err)
	}

	// A link whose file does not exist yet: the first write creates that
	// file and keeps the link.
	dangling := filepath.Join(dir, "later.yml")
	if err := os.Symlink(filepath.Join(dir, "data", "later-target.yml"), dangling); err != nil {
		t.Fatal(err)
	}
	if res := e.run(dangling, LeaseAcquire{Writer: "w1", Now: "2026-07-02T12:00:00Z"}); res.Word != WordOK {
		t.Fatalf("lease-acquire through a dangling link: %v %s", res.Word, res.Reason)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the dangling link was replaced: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "later-target.yml")); err != nil {
		t.Fatalf("the link's file was not created: %v", err)
	}
}
