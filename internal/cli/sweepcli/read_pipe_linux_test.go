package sweepcli_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/storage/outtext"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestReadPrintsTheSameIntoAPipe: read's payload of a large file (its
// text in memory of its own, handed to a pipe by reference) reaches a
// pipe byte for byte as it reaches a buffer, in process (Go's
// non-blocking pipe, and a blocking one as a command's stdout is) and
// from the real binary into a pipe and into a file; the in-process pipes
// took it by reference (the switch on, as the command has it). The same
// text through the general path (the file with another writer's indent,
// which no fast path takes) is the reference.
func TestReadPrintsTheSameIntoAPipe(t *testing.T) {
	sweepcli.SetOneCallProcess(true) // as cmd/sweep-state does
	defer sweepcli.SetOneCallProcess(false)
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yml")
	if err := os.WriteFile(state, benchseed.SweepState(3000), 0o600); err != nil {
		t.Fatal(err)
	}
	general := filepath.Join(dir, "reindented.yml")
	if err := os.WriteFile(general, benchseed.SweepReindented(3000), 0o600); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if rc := sweepcli.Main([]string{"read", "--state", general}, &want, io.Discard); rc != 0 || want.Len() < 1<<20 {
		t.Fatalf("the general path: exit %d, %d bytes", rc, want.Len())
	}
	var buf bytes.Buffer
	if rc := sweepcli.Main([]string{"read", "--state", state}, &buf, io.Discard); rc != 0 || !bytes.Equal(buf.Bytes(), want.Bytes()) {
		t.Fatalf("into a buffer: exit %d, %d bytes, want the general path's %d", rc, buf.Len(), want.Len())
	}
	for _, blocking := range []bool{false, true} {
		r, w := platformtest.Pipe(t, blocking)
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(r); got <- b }()
		before := outtext.Spliced()
		rc := sweepcli.Main([]string{"read", "--state", state}, w, io.Discard)
		w.Close()
		if b := <-got; rc != 0 || !bytes.Equal(b, want.Bytes()) {
			t.Fatalf("into a pipe (blocking %v): exit %d, %d bytes, want %d", blocking, rc, len(b), want.Len())
		}
		if outtext.Spliced() == before {
			t.Fatalf("into a pipe (blocking %v): nothing went by reference", blocking)
		}
		r.Close()
	}
	out, err := exec.Command(binPath, "read", "--state", state).Output() // stdout a pipe
	if err != nil || !bytes.Equal(out, want.Bytes()) {
		t.Fatalf("the binary into a pipe: %v, %d bytes, want %d", err, len(out), want.Len())
	}
	file, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cmd := exec.Command(binPath, "read", "--state", state)
	cmd.Stdout = file
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file.Name()); !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("the binary into a file: %d bytes, want %d", len(b), want.Len())
	}
}

// TestReadIntoAGonePipeDiesOfSIGPIPE: the binary's read into a pipe whose
// reader goes away after the status word ends as a write to stdout there
// does in Go (and did before the text went by reference): killed by
// SIGPIPE, nothing on stderr, whether the payload is the large text a pipe
// takes by reference or the general path's encoding (each far more than
// the pipe holds, so the reader is gone before it is all written), and
// the file untouched. Broken on purpose by writing what the pipe refused
// with a raw write(2) instead of the file's Write: the text's case exits 1.
func TestReadIntoAGonePipeDiesOfSIGPIPE(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string][]byte{
		"engine's form": benchseed.SweepState(3000),
		"general path":  benchseed.SweepReindented(3000),
	} {
		state := filepath.Join(dir, "state.yml")
		if err := os.WriteFile(state, text, 0o600); err != nil {
			t.Fatal(err)
		}
		r, w := platformtest.Pipe(t, true)
		cmd := exec.Command(binPath, "read", "--state", state)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		word := make([]byte, 3)
		_, rerr := io.ReadFull(r, word)
		r.Close()
		err := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if rerr != nil || string(word) != "OK\n" {
			t.Errorf("%s: the word %q (%v)", name, word, rerr)
		}
		if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGPIPE || stderr.Len() != 0 {
			t.Errorf("%s: %v, stderr %q; want killed by SIGPIPE, nothing said", name, err, stderr.String())
		}
		if b, _ := os.ReadFile(state); !bytes.Equal(b, text) {
			t.Errorf("%s: the state file changed", name)
		}
	}
}
