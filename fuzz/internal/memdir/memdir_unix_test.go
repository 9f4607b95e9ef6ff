//go:build unix

package memdir

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestRemoveOrphans: a directory a gone process made is removed; one this
// process made, a live process's, and anything not made by TempDir stay.
func TestRemoveOrphans(t *testing.T) {
	base := t.TempDir()
	names := map[string]bool{
		fmt.Sprintf("%s%d-1", prefix, 99999999):     false, // beyond any pid_max: gone
		fmt.Sprintf("%s%d-2", prefix, os.Getpid()):  true,
		fmt.Sprintf("%s%d-3", prefix, os.Getppid()): true,
		prefix + "old-style":                        true,
		"someone-else":                              true,
	}
	for name := range names {
		if err := os.Mkdir(filepath.Join(base, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeOrphans(base)
	var left, want []string
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	for name, stays := range names {
		if stays {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	if fmt.Sprint(left) != fmt.Sprint(want) {
		t.Fatalf("left %v, want %v", left, want)
	}
}

// TestTempDirIsPrivateAndRemoved: the directory is empty, 0700, and gone
// after the test that made it.
func TestTempDirIsPrivateAndRemoved(t *testing.T) {
	var d string
	t.Run("make", func(t *testing.T) {
		d = TempDir(t)
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v", d, fi.Mode(), err)
		}
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Fatalf("not empty: %v", entries)
		}
	})
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Fatalf("%s outlived its test: %v", d, err)
	}
}
