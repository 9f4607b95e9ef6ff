package sweepcli_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
)

// fullWriter refuses every write, as stdout on a full disk or a closed pipe.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestUnwritableStdoutExitsOne: when stdout cannot take the answer, every
// subcommand (and help and version) exits 1 with one line on stderr, never
// 0 without its status word, even though the call took effect (the
// reference exits 1 there too).
func TestUnwritableStdoutExitsOne(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yml")
	legacy := filepath.Join(dir, "legacy.json")
	if err := os.WriteFile(legacy, []byte(`{"channels": {"gh": {"cursor": "1"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	now := "--now=2026-07-02T12:00:00Z"
	calls := [][]string{
		{"lease-acquire", "--state", state, "--writer", "w", now},
		{"upsert-item", "--state", state, "--writer", "w", "--source", "gh", "--id", "1", "--json", `{"status": "ingested"}`, now},
		{"cursor-advance", "--state", state, "--writer", "w", "--source", "gh", "--to", "2", "--past-item", "1", now},
		{"cursor-get", "--state", state, "--source", "gh"},
		{"validate", "--state", state},
		{"run-record", "--state", state, "--writer", "w", "--outcome", "completed", "--counts", "{}", "--timestamp", "2026-07-02T12:01:00Z"},
		{"import-legacy", "--state", state, "--file", legacy},
		{"read", "--state", state},
		{"lease-release", "--state", state, "--writer", "w"},
		{"--version"},
		{"--help"},
		{"read", "--help"},
	}
	for _, args := range calls {
		var stderr bytes.Buffer
		rc := sweepcli.Main(args, fullWriter{}, &stderr)
		if rc != 1 || stderr.String() != "sweep-state: error: the answer could not be written to stdout\n" {
			t.Errorf("%s: exit %d, stderr %q; want 1 and the one line", args[0], rc, stderr.String())
		}
		if args[0] == "lease-acquire" {
			// The call took effect all the same: the lease is held.
			if b, _ := os.ReadFile(state); !strings.Contains(string(b), "writer: \"w\"") {
				t.Fatalf("lease-acquire did not take effect:\n%s", b)
			}
		}
	}
	if b, _ := os.ReadFile(state); strings.Contains(string(b), "lease:") || !strings.Contains(string(b), "cursor: \"2\"") {
		t.Errorf("the calls did not all take effect:\n%s", b)
	}
}

// refusingOnce takes every write but its second, which it refuses, and
// records what it is given after that refusal.
type refusingOnce struct {
	calls int
	after []byte
}

func (w *refusingOnce) Write(p []byte) (int, error) {
	w.calls++
	switch {
	case w.calls == 2:
		return 0, errors.New("no space left on device")
	case w.calls > 2:
		w.after = append(w.after, p...)
	}
	return len(p), nil
}

// TestNoWriteAfterStdoutRefused: once stdout refused a write of read's
// answer, nothing more is written to it (a later write could succeed and
// leave a torn answer with more bytes after the gap), whether the payload
// is the fast path's text or the general path's encoding, and the exit is
// 1 with the one line. Broken on purpose by writing the newline after a
// refused text, as c97ef75 did: the fast path's case gets "\n" after.
func TestNoWriteAfterStdoutRefused(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string][]byte{
		"engine's form": benchseed.SweepState(300),
		"general path":  benchseed.SweepReindented(300),
	} {
		state := filepath.Join(dir, "state.yml")
		if err := os.WriteFile(state, text, 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		w := &refusingOnce{}
		rc := sweepcli.Main([]string{"read", "--state", state}, w, &stderr)
		if w.calls < 2 {
			t.Fatalf("%s: %d writes; the test needs the answer in two or more", name, w.calls)
		}
		if rc != 1 || stderr.String() != "sweep-state: error: the answer could not be written to stdout\n" {
			t.Errorf("%s: exit %d, stderr %q; want 1 and the one line", name, rc, stderr.String())
		}
		if len(w.after) > 0 {
			t.Errorf("%s: %q written after stdout refused a write", name, w.after)
		}
	}
}

// countingWriter keeps what it is given and counts the writes.
type countingWriter struct {
	calls int
	bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.calls++
	return w.Buffer.Write(p)
}

// TestSmallReadAnswerIsOneWrite: read's answer that fits the output
// buffer reaches stdout in one write, word and payload together, on the
// fast path as on the general path (as at 9f88de5), so that the answers
// of processes sharing one pipe do not interleave (a pipe keeps a write
// of up to 4096 bytes whole). Only a larger text goes to stdout apart.
func TestSmallReadAnswerIsOneWrite(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string][]byte{
		"engine's form": benchseed.SweepState(3),
		"general path":  benchseed.SweepReindented(3),
	} {
		state := filepath.Join(dir, "state.yml")
		if err := os.WriteFile(state, text, 0o600); err != nil {
			t.Fatal(err)
		}
		w := &countingWriter{}
		if rc := sweepcli.Main([]string{"read", "--state", state}, w, io.Discard); rc != 0 || w.Len() > 4000 {
			t.Fatalf("%s: exit %d, %d bytes (the test needs an answer under 4000)", name, rc, w.Len())
		}
		if w.calls != 1 || !strings.HasPrefix(w.String(), "OK\n{") {
			t.Errorf("%s: %d writes of %q; want the whole answer in one", name, w.calls, w.String())
		}
	}
}
