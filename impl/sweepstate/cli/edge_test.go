package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/sweepstate/cli"
)

// runCLI runs the command line in process from dir and returns exit status,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	rc := cli.Main(args, &stdout, &stderr)
	return rc, stdout.String(), stderr.String()
}

const leasedState = "schema_version: 1\nlease:\n  writer: \"w1\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: 60\nsources: {}\nitems: {}\n"

// TestInvalidUTF8ArgvIsMisuse: a value that is not valid UTF-8 would be
// seen raw by the decision but written as U+FFFD, so it is refused as
// misuse before anything is touched (no lock file, no state file change).
func TestInvalidUTF8ArgvIsMisuse(t *testing.T) {
	cases := [][]string{
		{"lease-acquire", "--writer", "\xff", "--now", "2026-07-02T12:00:00Z"},
		{"lease-release", "--writer", "w\xfe"},
		{"upsert-item", "--source", "\xff", "--id", "1", "--json", "{}", "--writer", "w1"},
		{"upsert-item", "--source", "s", "--id", "1", "--json", "{\"a\": \"\xc3\"}", "--writer", "w1"},
		{"cursor-advance", "--source", "s", "--to", "9\xff", "--past-item", "1", "--writer", "w1"},
		{"cursor-get", "--source", "\xed\xa0\x80"}, // an encoded surrogate is invalid too
		{"run-record", "--writer", "w1", "--outcome", "partial", "--counts", "{}", "--timestamp", "\xff"},
		{"import-legacy", "--file", "legacy\xff.json"},
		{"upsert-item", "--source", "s", "--id", "1", "--json", "{}", "--writer", "w1", "--now=\xff"},
	}
	for _, c := range cases {
		for _, initial := range []string{"", leasedState} {
			dir := t.TempDir()
			state := filepath.Join(dir, "state.yml")
			if initial != "" {
				if err := os.WriteFile(state, []byte(initial), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{c[0], "--state", state}, c[1:]...)
			rc, stdout, stderr := runCLI(t, args...)
			if rc != 2 || stdout != "" || !strings.HasPrefix(stderr, "usage: sweep-state "+c[0]) ||
				!strings.Contains(stderr, "not valid UTF-8") {
				t.Errorf("%q: exit %d stdout %q stderr %q; want misuse", args, rc, stdout, stderr)
			}
			if strings.ContainsAny(stderr, "\xff\xfe") {
				t.Errorf("%q: stderr echoes the value: %q", args, stderr)
			}
			entries, _ := os.ReadDir(dir)
			got, _ := os.ReadFile(state)
			if want := map[bool]int{true: 0, false: 1}[initial == ""]; len(entries) != want || string(got) != initial {
				t.Errorf("%q: directory changed: %d entries, state %q", args, len(entries), got)
			}
		}
	}
	// A state path that is not valid UTF-8 is refused the same way.
	rc, _, _ := runCLI(t, "read", "--state", filepath.Join(t.TempDir(), "s\xff.yml"))
	if rc != 2 {
		t.Errorf("read --state <invalid UTF-8>: exit %d, want 2", rc)
	}
}
