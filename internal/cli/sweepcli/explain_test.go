package sweepcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
)

// With SWEEP_STATE_EXPLAIN=1 a CORRUPT answer adds exactly one line on
// stderr, "sweep-state: CORRUPT: REASON", and that line never holds the
// state file's path (its directory or its name) nor a value from the file,
// for every kind of CORRUPT file and every command that can meet one.
func TestExplainLineNeverHoldsThePath(t *testing.T) {
	t.Setenv(sweepcli.ExplainEnv, "1")
	dir := filepath.Join(t.TempDir(), "dir-PATHMARK")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"tabs":       "schema_version: 1\nitems:\n\t\"gh:1\":\n    id: \"1\"\n",
		"no colon":   "schema_version: 1\npassword VALUEMARK\n",
		"no version": "items: {}\n",
		"bad json":   "schema_version: 1\nitems: {\"VALUEMARK\": [}\n",
		"a list":     "- VALUEMARK\n",
	}
	commands := [][]string{
		{"read"},
		{"validate"},
		{"cursor-get", "--source", "gh"},
		{"lease-acquire", "--writer", "w", "--now", "2026-07-02T12:00:00Z"},
		{"upsert-item", "--writer", "w", "--source", "gh", "--id", "1", "--json", "{}", "--now", "2026-07-02T12:00:00Z"},
	}
	check := func(what, state string) {
		for _, args := range commands {
			rc, stdout, stderr := runCLI(t, append([]string{args[0], "--state", state}, args[1:]...)...)
			if rc != 0 || stdout != "CORRUPT\n" {
				t.Errorf("%s, %s: exit %d, stdout %q; want CORRUPT", what, args[0], rc, stdout)
				continue
			}
			if !strings.HasPrefix(stderr, "sweep-state: CORRUPT: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("%s, %s: stderr %q, want one explanation line", what, args[0], stderr)
			}
			for _, held := range []string{"PATHMARK", "NAMEMARK", "VALUEMARK", dir, filepath.Base(state)} {
				if strings.Contains(stderr, held) {
					t.Errorf("%s, %s: the explanation %q holds %q", what, args[0], stderr, held)
				}
			}
		}
	}
	for what, text := range files {
		state := filepath.Join(dir, "state-NAMEMARK.yml")
		if err := os.WriteFile(state, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		check(what, state)
	}
	notRegular := filepath.Join(dir, "directory-NAMEMARK.yml")
	if err := os.Mkdir(notRegular, 0o700); err != nil {
		t.Fatal(err)
	}
	check("a directory", notRegular)
}
