//go:build unix

package durable

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWriteFileReplacesWithMode0600(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.yml")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }
	if err := WriteFileFunc(p, write); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new\n" {
		t.Fatalf("content %q, %v", got, err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("leftover files: %v", entries)
	}
	if !OwnedByEffectiveUser(fi) {
		t.Error("file we wrote is not ours")
	}
}

func TestAcquireNeitherTruncatesNorFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "state.yml.lock")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if l, err := Acquire(link); err == nil {
		l.Unlock()
		t.Fatal("Acquire followed a symbolic link")
	}
	// A regular lock file with content keeps it.
	if l, err := Acquire(victim); err != nil {
		t.Fatal(err)
	} else {
		l.Unlock()
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Errorf("lock file truncated: %q", got)
	}
}

func TestAcquireExcludesOthers(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.lock")
	l, err := Acquire(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("lock mode %v", fi.Mode().Perm())
	}
	other, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("second flock while held: %v, want EWOULDBLOCK", err)
	}
	l.Unlock()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock after unlock: %v", err)
	}
}

// TestFailedWriteLeavesNothing: a write that fails or panics before the
// rename leaves the old file as it was and no temporary file behind.
func TestFailedWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.yml")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	failing := func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("disk says no")
	}
	if err := WriteFileFunc(p, failing); err == nil {
		t.Fatal("a failing write reported success")
	}
	func() {
		defer func() { recover() }()
		WriteFileFunc(p, func(w io.Writer) error { io.WriteString(w, "partial"); panic("defect") })
	}()
	got, _ := os.ReadFile(p)
	entries, _ := os.ReadDir(dir)
	if string(got) != "old" || len(entries) != 1 {
		t.Fatalf("after failed writes: content %q, %d entries", got, len(entries))
	}
}

// syncDirChecksPath: on Unix the directory sync opens the directory.
const syncDirChecksPath = true

// TestAcquireCreatesMode0600WhateverTheUmask: the lock file is created
// with mode 0600 (13.1) even under a umask that strips the owner's write
// bit; with 0400 every later call of a non-root user could not open it
// read-write and would answer ERROR for good.
func TestAcquireCreatesMode0600WhateverTheUmask(t *testing.T) {
	old := unix.Umask(0o277)
	defer unix.Umask(old)
	p := filepath.Join(t.TempDir(), "s.lock")
	l, err := Acquire(p)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("lock mode %v, want 0600", fi.Mode().Perm())
	}
	// An existing lock file keeps its mode: only a created one is set.
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if l, err = Acquire(p); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("existing lock file's mode changed to %v", fi.Mode().Perm())
	}
}
