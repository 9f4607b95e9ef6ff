package sweepcore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCapStaleSize: the 256 MiB cap also holds for a file that grew
// after it was measured. The file is one byte over the cap (sparse) and
// the size given is the one measured before it grew, exactly the cap, so
// only the check after the read can refuse it: the state file is too large
// (CORRUPT), the legacy file imports nothing. Planted bug: either check
// after the read removed (the cap tests always pass the true size).
func TestReadCapStaleSize(t *testing.T) {
	if raceDetector {
		t.Skip("single-goroutine reads of 512 MiB; checked without -race")
	}
	p := filepath.Join(t.TempDir(), "grown")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, MaxFileSize+1); err != nil {
		t.Skipf("no sparse file of %d bytes here: %v", MaxFileSize+1, err)
	}
	const measured = MaxFileSize // the size before the last byte came
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if text, err := readString(f, measured); err != errTooLarge {
		t.Errorf("state file grown past the cap after its stat: read %d bytes, %v; want errTooLarge", len(text), err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if in := readLegacyFrom(f, measured); in.present || in.text != "" {
		t.Errorf("legacy file grown past the cap after its stat: present %v, %d bytes; want nothing imported", in.present, len(in.text))
	}
}

// TestReadStringSizeHints: whatever size the stat said (none, too small
// as for a file that grew after it, exact, too large as for one that
// shrank), readString returns the file's bytes. Planted bug: the growing
// step removed (a short hint then reads nothing, without end, once the
// buffer is full: the test fails by its timeout).
func TestReadStringSizeHints(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yml")
	want := strings.Repeat("schema_version: 1\n", 6000) // 108 KB, more than one read
	if err := os.WriteFile(p, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, hint := range []int64{0, 10, 511, 512, 513, int64(len(want)), int64(len(want)) + 1, 1 << 20} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readString(f, hint)
		f.Close()
		if err != nil || got != want {
			t.Errorf("size hint %d: %d bytes, %v; want the file's %d", hint, len(got), err, len(want))
		}
	}
}
