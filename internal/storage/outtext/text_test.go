package outtext_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/internal/storage/outtext"
)

// pattern is n bytes that differ from their neighbours' (a chunk out of
// place or repeated shows).
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + (i/7+seed)%26)
	}
	return b
}

// build makes a text of three chunks: a large one filled in place, a
// small one, and a large one that append outgrew (so it left the memory
// Chunk gave). It returns the text, its bytes, and how many of them lie
// in chunks still in memory of their own.
func build(large int) (*outtext.Text, []byte, int) {
	var t outtext.Text
	var want []byte
	a := append(t.Chunk(large), pattern(large, 1)...)
	t.Add(a)
	b := append(t.Chunk(100), pattern(100, 2)...)
	t.Add(b)
	c := append(t.Chunk(large), pattern(large+1, 3)...) // one byte too many: moved
	t.Add(c)
	want = append(append(append(want, a...), b...), c...)
	return &t, want, large
}

// TestWriteToIsTheText: whatever w is (a buffer, a file), it receives the
// chunks in order, and an error of w comes back.
func TestWriteToIsTheText(t *testing.T) {
	defer outtext.OwnMemoryFrom(64 << 10)()
	text, want, _ := build(300 << 10)
	if text.Len() != len(want) {
		t.Fatalf("Len %d, want %d", text.Len(), len(want))
	}
	var buf bytes.Buffer
	if n, err := text.WriteTo(&buf); err != nil || n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("to a buffer: %d bytes, err %v; equal %v", n, err, bytes.Equal(buf.Bytes(), want))
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := text.WriteTo(f); err != nil || n != int64(len(want)) {
		t.Fatalf("to a file: %d bytes, err %v", n, err)
	}
	if got, _ := os.ReadFile(f.Name()); !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, not the text's %d", len(got), len(want))
	}
	refuse := errors.New("refused")
	if _, err := text.WriteTo(refusingWriter{refuse}); err != refuse {
		t.Fatalf("a refusing writer's error came back as %v", err)
	}
	var empty *outtext.Text
	if n, err := empty.WriteTo(&buf); n != 0 || err != nil || empty.Len() != 0 {
		t.Fatalf("a nil text wrote %d bytes, err %v", n, err)
	}
	text.Free()
}

type refusingWriter struct{ err error }

func (w refusingWriter) Write([]byte) (int, error) { return 0, w.err }

// drain reads r to its end on another goroutine.
func drain(r io.Reader) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	return got
}
