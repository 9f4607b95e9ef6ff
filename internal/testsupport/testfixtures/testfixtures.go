// Package testfixtures locates the recorded reference fixtures for tests.
//
// The fixtures are the behaviour recorded from the Python tools this project
// replaces. They travel with the repository, under spec/testdata/fixtures
// (beside the contracts they back; see the README there), so a clone on its
// own proves everything: no test reads anything outside the module.
package testfixtures

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of the fixtures folder, or of the subfolder
// named by elem. A missing folder fails the test in every mode: the recorded
// truth is part of the repository, so its absence is a broken checkout, not
// a reason to skip.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	p := Path(elem...)
	if !isDir(p) {
		t.Fatalf("fixtures not found at %s: the checkout is missing spec/testdata/fixtures", p)
	}
	return p
}

// Path returns where the fixtures (or the subfolder named by elem) are,
// whether or not they exist; tests call Dir to require them.
func Path(elem ...string) string {
	root := filepath.Join(moduleRoot(), "spec", "testdata", "fixtures")
	return filepath.Join(append([]string{root}, elem...)...)
}

// moduleRoot walks up from the working directory (go test runs each test
// in its package's folder) to the folder holding go.mod.
func moduleRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
