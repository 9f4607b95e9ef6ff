// Package testfixtures locates the recorded reference fixtures for tests.
//
// The fixtures live outside the repository, in the shared folder that sits
// beside the checkout (../shared/fixtures from the module root), because they
// are recordings of the Python tools owned by the whole project, not by this
// repository. STATEGUARD_FIXTURES overrides the location.
package testfixtures

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of the fixtures folder, or the subfolder
// named by elem. When the fixtures cannot be found the test is skipped on a
// developer machine and fails under CI (CI=true), where they must exist.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	root, ok := find()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("fixtures not found: expected ../shared/fixtures beside the module root, or STATEGUARD_FIXTURES")
		}
		t.Skip("fixtures not found (../shared/fixtures beside the module root); set STATEGUARD_FIXTURES")
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// Path returns where the fixtures (or the subfolder named by elem) should be,
// whether or not they exist; tests call Dir to require them.
func Path(elem ...string) string {
	root, _ := find()
	return filepath.Join(append([]string{root}, elem...)...)
}

func find() (string, bool) {
	if dir := os.Getenv("STATEGUARD_FIXTURES"); dir != "" {
		return dir, isDir(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			cand := filepath.Join(filepath.Dir(dir), "shared", "fixtures")
			return cand, isDir(cand)
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
