package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenCloseKeepsNoDescriptor: every Open, writable or read-only, gives
// back all its file descriptors on Close (the shared database descriptor
// included), so a long-lived process that opens ledgers does not run out.
func TestOpenCloseKeepsNoDescriptor(t *testing.T) {
	dir := privateDir(t)
	open := func(name string, ro bool) {
		doctorAndClose(t, filepath.Join(dir, name), Options{AllowExternalACL: onWindows, ReadOnly: ro, Clock: fixedClock(1)})
	}
	open("warm-up.sqlite", false)
	open("warm-up.sqlite", true)
	before := openDescriptors(t)
	// Distinct files: a process shares one descriptor per file, so only
	// new files show a descriptor that is never given back.
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("ledger-%d.sqlite", i)
		open(name, false)
		open(name, true)
	}
	if after := openDescriptors(t); after > before {
		t.Fatalf("%d descriptors open before opening and closing 10 new ledgers twice each, %d after", before, after)
	}
}

// doctorAndClose opens p, runs the doctor and closes it, each of which
// must succeed.
func doctorAndClose(t *testing.T, p string, opts Options) {
	t.Helper()
	l, err := Open(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Doctor(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func openDescriptors(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// TestReadOnlyWithWALKeepsNoDescriptor: a read-only view of a ledger with a
// -wal holds its own descriptor of the -wal, which Close gives back too.
func TestReadOnlyWithWALKeepsNoDescriptor(t *testing.T) {
	states, _ := crashStates(t)
	open := func() {
		doctorAndClose(t, writeCrashFiles(t, states["wal-alone"]), Options{AllowExternalACL: onWindows, ReadOnly: true})
	}
	open()
	before := openDescriptors(t)
	for i := 0; i < 10; i++ {
		open()
	}
	if after := openDescriptors(t); after > before {
		t.Fatalf("%d descriptors open before 10 read-only ledgers with a -wal, %d after", before, after)
	}
}
