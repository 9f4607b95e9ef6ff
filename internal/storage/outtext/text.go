// Package outtext holds a large output text, the read subcommand's
// payload, and writes it out. Its large chunks live in memory of their own
// when the process asks for it (UseOwnMemory) and the system allows
// (outside the Go heap, never reused for anything else), so that on Linux
// a pipe can take them by reference (vmsplice) instead of a copy, which
// for a payload of tens of megabytes is a large part of read's cost
// (spec/sweep-state.md 19.2 says when it is used and what it keeps safe).
package outtext

import (
	"io"
	"os"
	"runtime"
	"sync/atomic"
)

// Text is an output text in chunks, written in order. The zero Text is
// empty. A Text is built by one goroutine and not changed once written.
type Text struct {
	chunks [][]byte
	mem    *memory // the mappings its chunks may lie in; nil when none
}

// mapAtLeast is the smallest chunk given memory of its own (a variable
// for the tests); smaller chunks are ordinary Go memory.
var mapAtLeast = 1 << 20

// ownMemory is whether large chunks get memory of their own. Off unless
// the process says so: the Go collector does not count that memory, nor
// collect for it, so a program that builds large texts in a loop could
// hold many of them between two collections; a process that ends after
// one call (the sweep-state command) cannot.
var ownMemory atomic.Bool

// UseOwnMemory turns memory of their own for large chunks on or off for
// the whole process (cmd/sweep-state turns it on, through
// sweepcli.SetOneCallProcess).
func UseOwnMemory(on bool) { ownMemory.Store(on) }

// memory is the mappings of one Text, unmapped by a cleanup once the Text
// is unreachable (or at once by Free). A pipe that still holds pages of a
// mapping keeps them: unmapping takes them from this process, not from
// the pipe, and nothing else can be written into them.
type memory struct {
	maps    [][]byte // each mapping whole, as unmap needs it
	cleanup runtime.Cleanup
}

// Chunk returns an empty buffer of capacity n for t's next chunk, to be
// filled by append and handed back with Add. A large one is memory of its
// own when the process asked for that (UseOwnMemory) and the system gives
// it, else (and always when small) Go memory.
func (t *Text) Chunk(n int) []byte {
	if n >= mapAtLeast && ownMemory.Load() {
		if whole, b := mapChunk(n); b != nil {
			if t.mem == nil {
				t.mem = &memory{}
				t.mem.cleanup = runtime.AddCleanup(t, unmapAll, t.mem)
			}
			t.mem.maps = append(t.mem.maps, whole)
			return b
		}
	}
	return make([]byte, 0, n)
}

// Add appends c, a buffer from Chunk (or what append made of it), to the
// text.
func (t *Text) Add(c []byte) { t.chunks = append(t.chunks, c) }

// Len is the length of the text in bytes.
func (t *Text) Len() int {
	if t == nil {
		return 0
	}
	n := 0
	for _, c := range t.chunks {
		n += len(c)
	}
	return n
}

// WriteTo writes the text to w. When w is a pipe on Linux, the chunks in
// memory of their own go into it by reference; anything else, and
// whatever a pipe refuses that way, is written with w.Write, so the bytes
// w receives and the errors it answers are those of plain writes.
func (t *Text) WriteTo(w io.Writer) (n int64, err error) {
	if t == nil {
		return 0, nil
	}
	defer runtime.KeepAlive(t) // its memory must stay mapped until the last write
	f, _ := w.(*os.File)
	for _, c := range t.chunks {
		if f != nil && t.mem.holds(c) {
			k, ok := splice(f, c)
			n += int64(k)
			c = c[k:]
			if !ok {
				f = nil // this pipe takes no more by reference
			}
		}
		if len(c) > 0 {
			k, err := w.Write(c)
			n += int64(k)
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// Free gives back t's memory of its own at once, for a text that will not
// be written (a transcoding that declined). t must not be used after.
func (t *Text) Free() {
	if t == nil || t.mem == nil {
		return
	}
	t.mem.cleanup.Stop()
	unmapAll(t.mem)
	t.chunks, t.mem = nil, nil
}

// holds reports whether c lies in one of m's mappings: a chunk append
// outgrew was moved to Go memory, which the runtime may reuse once the
// text is collected, so a pipe must never hold it by reference.
func (m *memory) holds(c []byte) bool {
	if m == nil || cap(c) == 0 {
		return false
	}
	for _, whole := range m.maps {
		if within(c, whole) {
			return true
		}
	}
	return false
}

func unmapAll(m *memory) {
	for _, whole := range m.maps {
		unmap(whole)
	}
	m.maps = nil
}
