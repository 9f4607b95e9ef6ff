package yamlsubset_test

import (
	"bytes"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// TestHugePagesOnlyWhenTheProcessAsks: the huge-page advice outlives its
// buffer on the Go heap, so a program that calls the engine and goes on
// running must not get it unasked. Off by default, a read of a large file
// advises nothing; once the process turns it on (cmd/sweep-state does),
// the large output chunk and a large text buffer are advised, a small
// buffer still not. Broken on purpose by dropping the hugePages check
// from AdviseHugePages: the default case fails (2 buffers advised).
func TestHugePagesOnlyWhenTheProcessAsks(t *testing.T) {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	doc.Set("sources", value.NewMap())
	doc.Set("items", value.NewMap())
	text := []byte(yamlsubset.Emit(doc))
	const large = 8 << 20 // the size the stat reported: above the 4 MiB mark
	read := func() {
		t.Helper()
		if _, ok := yamlsubset.ReadJSON(bytes.NewReader(text), large, large, engineRules); !ok {
			t.Fatal("ReadJSON declined the engine's own text")
		}
		yamlsubset.AdviseHugePages(make([]byte, 0, large))
		yamlsubset.AdviseHugePages(make([]byte, 0, 64<<10))
	}

	var n int
	defer yamlsubset.RecordAdvice(&n)()
	read()
	if n != 0 {
		t.Fatalf("%d buffers advised with huge pages off (the default)", n)
	}
	yamlsubset.UseHugePages(true)
	read()
	if n != 2 {
		t.Fatalf("%d buffers advised with huge pages on, want 2 (the output chunk, the large text buffer)", n)
	}
	yamlsubset.UseHugePages(false)
	read()
	if n != 2 {
		t.Fatalf("advice after turning huge pages off again (%d calls)", n)
	}
}
