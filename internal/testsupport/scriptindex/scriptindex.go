// Package scriptindex keeps scripts-tests/README.md's index of the txtar
// scripts true: every script of an engine is listed there, and every script
// listed exists.
package scriptindex

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Check compares the scripts in dir (an engine's testdata folder) with the
// scripts the README links under that folder: a link reads
// [NAME.txtar](ENGINE/testdata/NAME.txtar), where ENGINE is dir's parent's
// name. Each script missing from the index, and each listed one that does
// not exist, is a test error.
func Check(t testing.TB, readme, dir string) {
	t.Helper()
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	engine := filepath.Base(filepath.Dir(abs))
	link := regexp.MustCompile(`\]\(` + regexp.QuoteMeta(engine) + `/testdata/([^)/]+\.txtar)\)`)
	var listed []string
	for _, m := range link.FindAllStringSubmatch(string(text), -1) {
		listed = append(listed, m[1])
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var present []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".txtar") {
			present = append(present, e.Name())
		}
	}
	if len(present) == 0 {
		t.Fatalf("%s holds no scripts: the check would be vacuous", dir)
	}
	for _, name := range present {
		if !slices.Contains(listed, name) {
			t.Errorf("%s/testdata/%s is not in %s's index: add a row for it under its topic", engine, name, filepath.Base(readme))
		}
	}
	for _, name := range listed {
		if !slices.Contains(present, name) {
			t.Errorf("%s lists %s/testdata/%s, which does not exist", filepath.Base(readme), engine, name)
		}
	}
}
