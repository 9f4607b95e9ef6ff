package ledgercli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The TASK_STATE_GUARD_EXPLAIN phrases are a stable interface: callers
// match on them to decide a retry. A phrase that release 0.1.0 gave
// (testdata/explain-phrases-0.1.0.txt) and no longer is given, and a
// phrase given now that 0.1.0 did not give, must each be named in
// CHANGELOG.md, so no phrase changes silently. (The test fails when a
// phrase is changed without a CHANGELOG line naming it; seen with the
// list phrases before their entry.)
func TestExplainPhrasesChangeOnlyWithAChangelogEntry(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	// A phrase may wrap across lines there.
	changelog := strings.Join(strings.Fields(string(raw)), " ")
	released := map[string]bool{}
	text, err := os.ReadFile(filepath.Join("testdata", "explain-phrases-0.1.0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			released[line] = true
		}
	}
	now := map[string]string{}
	for _, dir := range ledgerSourceDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go sources in %s: %v", dir, err)
		}
		for _, file := range files {
			if !strings.HasSuffix(file, "_test.go") {
				collectReasons(t, file, now)
			}
		}
	}
	if len(released) < 40 || len(now) < 40 {
		t.Fatalf("%d released, %d current phrases: the scan is broken", len(released), len(now))
	}
	var changed []string
	for p := range now {
		if !released[p] {
			changed = append(changed, "added: "+p)
		}
	}
	for p := range released {
		if _, ok := now[p]; !ok {
			changed = append(changed, "removed: "+p)
		}
	}
	sort.Strings(changed)
	for _, c := range changed {
		_, phrase, _ := strings.Cut(c, ": ")
		if !strings.Contains(changelog, phrase) {
			t.Errorf("explain phrase %s: not named in CHANGELOG.md", c)
		}
	}
}
