package outtext_test

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stateguard/stateguard/internal/storage/outtext"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestPipeTakesTheChunksOfItsOwnMemory: into a pipe, the chunk that is
// still in the memory Chunk gave goes by reference (the count of spliced
// bytes grows by exactly its length); the small chunk and the one append
// moved to Go memory are copied, since the runtime may reuse theirs once
// the text is gone. The reader gets the whole text in order, from a
// non-blocking pipe (Go's own, through the poller, many times fuller
// than the pipe holds) and from a blocking one (a command's stdout).
// Broken on purpose by making holds answer true for every chunk: the
// count grows by all three chunks and the test fails.
func TestPipeTakesTheChunksOfItsOwnMemory(t *testing.T) {
	defer outtext.OwnMemoryFrom(64 << 10)()
	for _, blocking := range []bool{false, true} {
		text, want, mapped := build(1 << 20)
		r, w := platformtest.Pipe(t, blocking)
		got := drain(r)
		before := outtext.Spliced()
		n, err := text.WriteTo(w)
		w.Close()
		if err != nil || n != int64(len(want)) {
			t.Fatalf("blocking %v: %d bytes written, err %v", blocking, n, err)
		}
		if b := <-got; !bytes.Equal(b, want) {
			t.Fatalf("blocking %v: the reader got %d bytes, not the text's %d", blocking, len(b), len(want))
		}
		if d := outtext.Spliced() - before; d != int64(mapped) {
			t.Fatalf("blocking %v: %d bytes spliced, want %d (only the chunk in its own memory)", blocking, d, mapped)
		}
		r.Close()
		text.Free()
	}
}

// TestPipeKeepsTheTextAfterItsMemoryGoes: a pipe holds the pages it was
// given, not a copy, so the text must never change while it is there.
// Its memory is only ever unmapped, never reused: with the text in the
// pipe and nobody reading yet, Free unmaps it and fresh memory is written
// over the same range of addresses; the reader still gets the text.
// Broken on purpose by writing over the chunk's memory instead of
// unmapping it in Free (what a pool of reused chunks would do): the
// reader gets the new bytes and the test fails.
func TestPipeKeepsTheTextAfterItsMemoryGoes(t *testing.T) {
	defer outtext.OwnMemoryFrom(64 << 10)()
	r, w := platformtest.Pipe(t, true)
	defer r.Close()
	const size = 256 << 10
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, size); err != nil {
		t.Fatalf("cannot make the pipe hold %d bytes: %v", size, err)
	}
	var text outtext.Text
	want := pattern(size, 5)
	text.Add(append(text.Chunk(size), want...))
	before := outtext.Spliced()
	if n, err := text.WriteTo(w); err != nil || n != size || outtext.Spliced()-before != size {
		t.Fatalf("%d bytes written (%d spliced), err %v", n, outtext.Spliced()-before, err)
	}
	w.Close()
	text.Free()
	for range 4 { // fresh mappings, likely over the freed addresses
		m, err := unix.Mmap(-1, 0, 4<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m {
			m[i] = 0xff
		}
		defer unix.Munmap(m)
	}
	if b := <-drain(r); !bytes.Equal(b, want) {
		t.Fatalf("the reader got %d bytes, %d of them 0xff, not the text", len(b), bytes.Count(b, []byte{0xff}))
	}
}

// TestClosedPipeAnswersAsAWrite: a pipe whose reader is gone refuses the
// splice; the text falls back to a write, whose error (EPIPE) comes back
// as a plain write's would.
func TestClosedPipeAnswersAsAWrite(t *testing.T) {
	defer outtext.OwnMemoryFrom(64 << 10)()
	text, _, _ := build(1 << 20)
	defer text.Free()
	r, w := platformtest.Pipe(t, true)
	defer w.Close()
	r.Close()
	if _, err := text.WriteTo(w); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("err %v, want EPIPE", err)
	}
}

// TestOwnMemoryOnlyWhenTheProcessAsks: memory the collector does not
// count must not pile up in a program that goes on running, so by default
// a large chunk is Go memory and a pipe gets a copy; once the process
// turns it on (cmd/sweep-state does), the same chunk goes by reference.
// Broken on purpose by dropping the ownMemory check from Chunk: the
// default case splices.
func TestOwnMemoryOnlyWhenTheProcessAsks(t *testing.T) {
	for _, on := range []bool{false, true} {
		outtext.UseOwnMemory(on)
		text, want, mapped := build(1 << 20)
		r, w := platformtest.Pipe(t, true)
		got := drain(r)
		before := outtext.Spliced()
		if _, err := text.WriteTo(w); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if b := <-got; !bytes.Equal(b, want) {
			t.Fatalf("own memory %v: the reader got %d bytes, not the text's %d", on, len(b), len(want))
		}
		if d, wantd := outtext.Spliced()-before, map[bool]int64{false: 0, true: int64(mapped)}[on]; d != wantd {
			t.Errorf("own memory %v: %d bytes spliced, want %d", on, d, wantd)
		}
		r.Close()
		text.Free()
	}
	outtext.UseOwnMemory(false)
}

// TestNonBlockingPipeKeepsItsDeadline: into a non-blocking pipe (Go's
// own, through the poller) that nobody reads, the splice waits as a write
// does, so the file's write deadline ends it with the error a write gets
// rather than leaving it blocked in the kernel (vmsplice waits for room,
// even on such a pipe, unless told SPLICE_F_NONBLOCK). What the pipe took
// before, it took by reference. Broken on purpose by splicing without that
// flag: WriteTo never returns and the test times out.
func TestNonBlockingPipeKeepsItsDeadline(t *testing.T) {
	defer outtext.OwnMemoryFrom(64 << 10)()
	text, _, _ := build(1 << 20)
	defer text.Free()
	r, w := platformtest.Pipe(t, false)
	defer r.Close()
	defer w.Close()
	if err := w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	before := outtext.Spliced()
	n, err := text.WriteTo(w)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%d bytes written, err %v; want the deadline's error", n, err)
	}
	if d := outtext.Spliced() - before; d != n {
		t.Fatalf("%d bytes written, %d of them spliced; want all of them", n, d)
	}
}
