package version

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, c := range []struct{ stamp, module, want string }{
		{"", "", Fallback},
		{"", "(devel)", Fallback},
		{"", "v0.2.0", "0.2.0"},
		{"", "v0.1.1-0.20261130173000-e4dcb55abcde", "0.1.1-0.20261130173000-e4dcb55abcde"},
		{"1.2.3", "v0.2.0", "1.2.3"},
		{"v1.2.3", "(devel)", "1.2.3"},
	} {
		if got := choose(c.stamp, c.module); got != c.want {
			t.Errorf("choose(%q, %q) = %q, want %q", c.stamp, c.module, got, c.want)
		}
	}
}

// A test binary has no module version and no stamp: the fallback.
func TestStringInTests(t *testing.T) {
	if got := String(); got != Fallback {
		t.Fatalf("String() = %q, want %q", got, Fallback)
	}
}

// A build without a stamp or a module version is a development build: it
// must not claim a release. Fallback is a pre-release ("-dev") of a version
// above every release CHANGELOG.md records, so it sorts after the release
// it was developed from and before the next one, and SECURITY.md's request
// for the version tells a report from a development build apart.
func TestFallbackClaimsNoRelease(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("..", "..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	released := regexp.MustCompile(`(?m)^## \[(\d+)\.(\d+)\.(\d+)\]`).FindAllStringSubmatch(string(log), -1)
	if len(released) == 0 {
		t.Fatal("CHANGELOG.md records no release: the check would be vacuous")
	}
	core, found := strings.CutSuffix(Fallback, "-dev")
	if !found {
		t.Fatalf("Fallback %q is not a -dev pre-release", Fallback)
	}
	var fb [3]int
	if _, err := fmt.Sscanf(core, "%d.%d.%d", &fb[0], &fb[1], &fb[2]); err != nil {
		t.Fatalf("Fallback %q: %v", Fallback, err)
	}
	for _, r := range released {
		var rel [3]int
		for i := range rel {
			rel[i], _ = strconv.Atoi(r[i+1])
		}
		if slices.Compare(fb[:], rel[:]) <= 0 {
			t.Errorf("Fallback %q is not above the release %s.%s.%s", Fallback, r[1], r[2], r[3])
		}
	}
}

// The specs and the README say what a development build prints; raising
// Fallback at a release must carry them along, so each names it.
func TestDocsNameTheFallback(t *testing.T) {
	for _, doc := range []string{
		filepath.Join("spec", "sweep-state.md"),
		filepath.Join("spec", "task-state-guard.md"),
		"README.md",
	} {
		text, err := os.ReadFile(filepath.Join("..", "..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "`"+Fallback+"`") {
			t.Errorf("%s does not name the development version `%s`", doc, Fallback)
		}
	}
}
