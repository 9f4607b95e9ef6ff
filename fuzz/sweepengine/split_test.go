package sweepengine

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"

	"github.com/stateguard/stateguard/internal/sweepfast"
)

// splitOps are the subcommands whose fast path parses only the items they
// touch (impl/sweepstate's loadFor), on the benchmark file's writer,
// source and ids: an existing item and a new one, a closed item to
// downgrade, a lease kept and one taken over.
var splitOps = [][]string{
	{"upsert-item", "--source", "slack:C42", "--id", "1719900000.000001", "--json", `{"status": "closed", "n": [1, 2.5], "m": {"z": 1, "a": {}}}`, "--writer", "w1", "--now", fileNow},
	{"upsert-item", "--source", "slack:C42", "--id", "0", "--json", `{"body": "b", "sensitive": true}`, "--writer", "w1", "--now", fileNow},
	{"upsert-item", "--source", "zz", "--id", "9", "--json", `{"title": "caf\u00e9"}`, "--writer", "w1", "--now", fileNow},
	{"upsert-item", "--source", "gh", "--id", "9", "--json", `{"status": "closed", "body": "b"}`, "--writer", "w1", "--now", fileNow},
	{"cursor-advance", "--source", "slack:C42", "--to", "1719900000.000200", "--past-item", "1719900000.000002", "--writer", "w1", "--now", fileNow},
	{"cursor-advance", "--source", "gh", "--to", "10", "--past-item", "9", "--writer", "w1", "--now", fileNow},
	{"lease-acquire", "--writer", "w1", "--now", fileNow},
	{"lease-acquire", "--writer", "w2", "--now", "2026-07-02T14:00:00Z", "--ttl-minutes", "5"},
	{"lease-release", "--writer", "w1"},
	{"run-record", "--writer", "w1", "--outcome", "partial", "--counts", `{"n": 1, "Y": 2}`, "--timestamp", "t"},
	{"validate"},
	{"cursor-get", "--source", "slack:C42"},
}

// FuzzSplitItems puts any bytes in the state file and runs one of the
// subcommands whose fast path splits the file (only the items the command
// touches are parsed; the others are written back as the file had them),
// once with the fast path and once without it (sweepfast), each on its
// own copy of the file. Oracle: the same exit status, stdout and stderr,
// and the same file afterwards (bytes, or absence), for any input: every
// CORRUPT and ERROR reason, every decline of the fast path included.
func FuzzSplitItems(f *testing.F) {
	for i, s := range editSeeds(f) {
		// One command in turn, and the three that split differently:
		// one item kept, none, the closed ones.
		for _, op := range []int{i % len(splitOps), 0, 6, 10} {
			f.Add([]byte(s), uint8(op))
		}
	}
	for i, s := range fixtureSeeds(f) {
		f.Add([]byte(s), uint8(i))
	}
	for op := range splitOps {
		f.Add(readTextBase(), uint8(op))
	}
	f.Fuzz(func(t *testing.T, file []byte, op uint8) {
		args := splitOps[int(op)%len(splitOps)]
		fast := splitRun(t, file, args, false)
		whole := splitRun(t, file, args, true)
		if fast != whole {
			t.Fatalf("%s:\nfast path:  %s\nwhole file: %s\nfile: %q", args[0], fast, whole, file)
		}
	})
}

// splitRun runs args on a fresh copy of file and describes the outcome.
func splitRun(t *testing.T, file []byte, args []string, whole bool) string {
	dir := memdir.TempDir(t) // fsync is free there: the oracle is not about durability
	state := handEdited(t, dir, file)
	sweepfast.SetOff(whole)
	defer sweepfast.SetOff(false)
	rc, stdout, stderr := runCLI(append([]string{args[0], "--state", state}, args[1:]...))
	after, err := os.ReadFile(state)
	if err != nil {
		after = []byte(fmt.Sprint("no file: ", os.IsNotExist(err)))
	}
	entries, _ := os.ReadDir(dir)
	names := ""
	for _, e := range entries {
		names += " " + e.Name()
	}
	return fmt.Sprintf("rc %d, stdout %q, stderr %q, files%s, state %q", rc, stdout, bytes.ReplaceAll([]byte(stderr), []byte(dir), []byte("DIR")), names, after)
}
