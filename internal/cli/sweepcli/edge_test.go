package sweepcli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/cli/sweepcli"
)

// runCLI runs the command line in process from dir and returns exit status,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	rc := sweepcli.Main(args, &stdout, &stderr)
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

// TestOverriddenInvalidUTF8ValueIsDiscarded: D9 covers the values a call
// uses. An option given twice keeps its last value (argparse), so an
// earlier value that is not valid UTF-8 is discarded unread, as the
// reference discards it, and the call runs (found by fuzz/sweepcli).
func TestOverriddenInvalidUTF8ValueIsDiscarded(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yml")
	rc, stdout, stderr := runCLI(t, "lease-acquire", "--state", "s\xff.yml", "--writer", "w\x80",
		"--writer", "w2", "--now", "2026-07-02T12:00:00Z", "--state", state)
	if rc != 0 || stdout != "OK\n" || stderr != "" {
		t.Fatalf("exit %d stdout %q stderr %q; want OK", rc, stdout, stderr)
	}
	got, err := os.ReadFile(state)
	if err != nil || !strings.Contains(string(got), "writer: \"w2\"") {
		t.Fatalf("state %q %v; want the lease of w2", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries beside the state file; want state.yml and its lock", len(entries))
	}
}

// hugeFile creates a sparse file of size bytes (no disk space used).
func hugeFile(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Skipf("cannot create a sparse file of %d bytes here: %v", size, err)
	}
}

// TestHugeStateFileIsCorrupt: a state file beyond the cap is CORRUPT and
// untouched, whatever size it claims (the engine must not presize a buffer
// from it: a 2 TiB file once crashed the process).
func TestHugeStateFileIsCorrupt(t *testing.T) {
	for _, size := range []int64{sweepstate.MaxFileSize + 1, 2 << 40} {
		state := filepath.Join(t.TempDir(), "state.yml")
		hugeFile(t, state, size)
		for _, args := range [][]string{
			{"read", "--state", state},
			{"lease-acquire", "--state", state, "--writer", "w1", "--now", "2026-07-02T12:00:00Z"},
			{"validate", "--state", state},
		} {
			rc, stdout, stderr := runCLI(t, args...)
			if rc != 0 || stdout != "CORRUPT\n" || stderr != "" {
				t.Errorf("size %d %q: exit %d stdout %q stderr %q; want CORRUPT", size, args, rc, stdout, stderr)
			}
		}
		if fi, err := os.Stat(state); err != nil || fi.Size() != size {
			t.Errorf("size %d: state file changed: %v %v", size, fi, err)
		}
	}
}

// TestHugeLegacyFileImportsNothing: a legacy file beyond the cap is
// treated as unreadable: nothing imported, the state created as usual.
func TestHugeLegacyFileImportsNothing(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "legacy.json")
	hugeFile(t, legacy, 2<<40)
	state := filepath.Join(dir, "state.yml")
	rc, stdout, _ := runCLI(t, "import-legacy", "--state", state, "--file", legacy)
	if want := "OK\n{\"cursors_imported\": 0, \"items_imported\": 0}\n"; rc != 0 || stdout != want {
		t.Errorf("exit %d stdout %q, want %q", rc, stdout, want)
	}
}

// TestPanicIsError: a defect that panics inside a call answers the
// contract's ERROR (one stderr line, exit 0), never a stack trace. The
// clock is the one input a test can make panic.
func TestPanicIsError(t *testing.T) {
	saved := sweepcli.Clock
	t.Cleanup(func() { sweepcli.Clock = saved })
	sweepcli.Clock = func() time.Time { panic("clock defect") }
	state := filepath.Join(t.TempDir(), "state.yml")
	rc, stdout, stderr := runCLI(t, "lease-acquire", "--state", state, "--writer", "w1")
	if rc != 0 || stdout != "ERROR\n" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "sweep-state: error: ") {
		t.Errorf("exit %d stdout %q stderr %q; want ERROR with one stderr line", rc, stdout, stderr)
	}
	// The lock was released: the next call runs.
	sweepcli.Clock = saved
	if rc, stdout, _ := runCLI(t, "lease-acquire", "--state", state, "--writer", "w1", "--now", "2026-07-02T12:00:00Z"); rc != 0 || stdout != "OK\n" {
		t.Errorf("after the panic: exit %d stdout %q", rc, stdout)
	}
}
