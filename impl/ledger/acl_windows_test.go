//go:build windows

package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

const aclRequired = "external ACL acknowledgement is required on Windows"

// TestWindowsOpenRequiresTheACLAcknowledgement: without
// Options.AllowExternalACL every open is refused as InvalidInput before
// anything is created (spec/task-state-guard.md 11.3), writable or
// read-only, new file or existing ledger. Broken on purpose by making
// platformPreflight return nil: every refusal below fails.
func TestWindowsOpenRequiresTheACLAcknowledgement(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tasks.sqlite")
	for _, ro := range []bool{false, true} {
		if _, err := Open(p, Options{AllowExternalACL: false, ReadOnly: ro}); !errors.Is(err, ErrInvalidInput) || Reason(err) != aclRequired {
			t.Fatalf("read-only %v, no acknowledgement, new path: %v; want InvalidInput %q", ro, err, aclRequired)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a refused open left %d entries in the directory", len(left))
	}
	l, err := Open(p, Options{AllowExternalACL: true, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		if _, err := Open(p, Options{AllowExternalACL: false, ReadOnly: ro}); !errors.Is(err, ErrInvalidInput) || Reason(err) != aclRequired {
			t.Fatalf("read-only %v, no acknowledgement, existing ledger: %v; want InvalidInput %q", ro, err, aclRequired)
		}
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Fatal("a refused open changed the database")
	}
}

// TestWindowsAcknowledgementIsHonoured: with the acknowledgement a ledger
// opens on a drive-letter path, in either separator style, reports the
// external_acl permission model, and reads back what it wrote, read-only
// too. Broken on purpose by making permissionModel "posix_mode".
func TestWindowsAcknowledgementIsHonoured(t *testing.T) {
	dir := t.TempDir()
	if filepath.VolumeName(dir) == "" {
		t.Fatalf("temporary folder %q has no drive letter", dir)
	}
	p := filepath.Join(dir, "tasks.sqlite")
	l, err := Open(p, Options{AllowExternalACL: true, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.StorageInfo().PermissionModel; got != "external_acl" {
		t.Errorf("permission model %q, want external_acl", got)
	}
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, path := range []string{p, filepath.ToSlash(p), p + `\`} {
		ro, err := Open(path, Options{AllowExternalACL: true, ReadOnly: true, Clock: fixedClock(1000)})
		if err != nil {
			t.Fatalf("read-only open of %q: %v", path, err)
		}
		got, err := ro.Get(task.ID)
		ro.Close()
		if err != nil || got.ID != task.ID {
			t.Fatalf("read-only get through %q: %+v %v", path, got, err)
		}
	}
}

// TestWindowsStorageRefusals: on Windows the parent directory is never
// created, and a database with a second hard link is refused (11.3).
// Broken on purpose by letting infoFromHandle report one link always.
func TestWindowsStorageRefusals(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing", "tasks.sqlite"), Options{AllowExternalACL: true})
	if !errors.Is(err, ErrInvalidInput) || Reason(err) != "database directory does not exist" {
		t.Fatalf("missing parent: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the missing parent was created: %v", err)
	}
	p := filepath.Join(dir, "tasks.sqlite")
	l, err := Open(p, Options{AllowExternalACL: true, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := os.Link(p, filepath.Join(dir, "second-name.sqlite")); err != nil {
		t.Fatalf("making a hard link: %v", err)
	}
	for _, ro := range []bool{false, true} {
		_, err := Open(p, Options{AllowExternalACL: true, ReadOnly: ro})
		if !errors.Is(err, ErrInvalidInput) || Reason(err) != "database file has more than one link" {
			t.Errorf("read-only %v, two links: %v", ro, err)
		}
	}
}
