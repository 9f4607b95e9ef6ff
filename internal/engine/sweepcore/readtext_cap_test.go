package sweepcore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadTextAtTheCap: a file of this engine's text exactly MaxFileSize
// bytes long is still answered from its text (ReadText's fast path), and
// still streamed by the loads that stream (cursor-get's and validate's:
// loadFor keeps none of the text), as every smaller one is; one byte more
// is too large, whichever path.
// Broken on purpose: the size test before ReadText's fast path made strict
// (fi.Size() < MaxFileSize): the file at the cap then comes back as Run's
// document, with no text; the same in loadFor's test before streaming:
// the file at the cap is then read whole into memory and split, and the
// load comes back not partial.
func TestReadTextAtTheCap(t *testing.T) {
	if raceDetector || testing.Short() {
		t.Skip("writes and reads a 256 MiB file; checked without -race and -short")
	}
	p := filepath.Join(t.TempDir(), "state.yml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const head = "schema_version: 1\nsources: {}\nitems:\n"
	w.WriteString(head)
	written := int64(len(head))
	body := strings.Repeat("x", 4000)
	for i := 0; ; i++ {
		entry := fmt.Sprintf("  k%08d:\n    body: \"%s\"\n", i, body)
		if rest := MaxFileSize - written; int64(len(entry)) >= rest-len64("  k00000000:\n    body: \"\"\n") {
			// The last entry takes what is left, exactly.
			last := fmt.Sprintf("  k%08d:\n    body: \"", i)
			pad := rest - int64(len(last)) - 2
			w.WriteString(last)
			w.WriteString(strings.Repeat("y", int(pad)))
			w.WriteString("\"\n")
			written += int64(len(last)) + pad + 2
			break
		}
		w.WriteString(entry)
		written += int64(len(entry))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() != MaxFileSize || written != MaxFileSize {
		t.Fatalf("the file is %v bytes (%v), want %d", fi.Size(), err, MaxFileSize)
	}
	res, text := ReadText(p)
	if res.Word != WordOK || res.Payload != nil || text.Len() == 0 {
		t.Fatalf("at the cap: %s %q, document %v, %d bytes of text; want OK from the text", res.Word, res.Reason, res.Payload != nil, text.Len())
	}
	text.Free()
	for _, cmd := range []Command{CursorGet{Source: "s"}, Validate{}} {
		st, others, failed := loadFor(context.Background(), p, cmd, legacyFile{}, true)
		if failed != nil || !st.partial || others != nil || mapAt(st.doc, "items").Len() != 0 {
			t.Fatalf("%T's load at the cap: failed %v, partial %v, %d items split off, %d parsed; want it streamed, nothing kept", cmd, failed, st.partial, others.Len(), mapAt(st.doc, "items").Len())
		}
	}
	g, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.WriteString("\n")
	g.Close()
	if res, text := ReadText(p); res.Word != WordCorrupt || text.Len() != 0 {
		t.Fatalf("one byte over the cap: %s %q, %d bytes of text; want CORRUPT", res.Word, res.Reason, text.Len())
	}
	if _, _, failed := loadFor(context.Background(), p, CursorGet{Source: "s"}, legacyFile{}, true); failed == nil || failed.Word != WordCorrupt {
		t.Fatalf("cursor-get's load one byte over the cap: %v, want CORRUPT", failed)
	}
}

func len64(s string) int64 { return int64(len(s)) }
