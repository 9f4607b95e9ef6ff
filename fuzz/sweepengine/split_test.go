package sweepengine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/engine/sweepfast"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
)

// splitOps are the subcommands whose fast path parses only the items they
// touch (sweepcore's loadFor), on the benchmark file's writer,
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
	{"import-legacy", "--file", "legacy-map.json"},
	{"import-legacy", "--file", "legacy-list.json", "--source-map", `{"C42": "slack:C42", "D1": "gh"}`},
	{"import-legacy", "--file", "legacy.yml"},
}

// legacyFiles are the legacy files of splitOps's import-legacy calls,
// written beside the state (splitRun): items of the benchmark file that
// have every field it copies and ones that lack some (in the fuzzed
// file), new ones, ids Python finds false, a number as an id, one id
// twice, and channel cursors.
var legacyFiles = map[string]string{
	"legacy-map.json": `{"channels": {"C42": {"last_processed_ts": "1719900000.000300"}}, "items": {` +
		`"slack:C42:1719900000.000001": {"status": "s", "channel": "c", "title": "t", "url": "u"}, ` +
		`"slack:C42:1719900000.000002": {"title": "t2"}, "slack:C42:1719900000.000004": {"url": null, "body": "b"}, ` +
		`"new:1": {"status": "ingested", "channel": "slack:C42"}, "": {"title": "no id"}, "x": 1}}`,
	"legacy-list.json": `{"channels": {"D1": {"cursor": 5}}, "items": [` +
		`{"id": "slack:C42:1719900000.000003", "title": "t3"}, {"id": 7, "channel": "c"}, {"id": 0, "title": "zero"}, ` +
		`{"id": "slack:C42:1719900000.000000", "status": "s"}, {"id": "slack:C42:1719900000.000003", "url": "u3"}, "not a map"]}`,
	"legacy.yml": "items:\n  slack:C42:1719900000.000000:\n    url: u\n  zz:\n    title: t\n  N:\n    status: s\n",
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
		for _, s := range pythonSeeds(f) {
			f.Add([]byte(s), uint8(op))
		}
	}
	// The key line after a run of an item's lines (yamlsubset's run),
	// spelled otherwise than Emit spells it: an entry of items quoted
	// though bare, a YAML 1.1 word bare (after the last entry, in key
	// order), a map inside an item quoted though bare.
	base := string(readTextBase())
	last := strings.LastIndex(base, "  \"slack:C42:")
	for _, s := range []string{
		base[:last] + "  \"sz\":\n    source: \"slack:C42\"\n",
		base + "  yes:\n    source: \"slack:C42\"\n",
		base + "  \"yes\":\n    source: \"slack:C42\"\n",
		strings.Replace(base, "    labels: [\"auth\", \"regression\"]\n", "    labels: [\"auth\", \"regression\"]\n    m:\n      a: 1\n    \"p\":\n      b: 1\n", 1),
	} {
		for _, op := range []int{0, 6, 10, 11} {
			f.Add([]byte(s), uint8(op))
		}
	}
	// Lines that the items before have the same (run keeps the second
	// item's whole and takes them whole in the items after it), in the
	// last item but one spelled otherwise, as long or longer: another
	// value, values Emit does not write, the line again; and the
	// reference writer's nan in two items after a number.
	five := string(benchseed.SweepState(5))
	fourth := strings.LastIndex(five, "  \"slack:C42:1719900000.000003\":")
	labels := "    labels: [\"auth\", \"regression\"]\n"
	for _, s := range []string{
		five[:fourth] + strings.Replace(five[fourth:], "    source: \"slack:C42\"\n", "    source: \"slack:C43\"\n", 1),
		five[:fourth] + strings.Replace(five[fourth:], "    source: \"slack:C42\"\n", "    source: \"slack:C4\t\"\n", 1),
		five[:fourth] + strings.Replace(five[fourth:], labels, "    labels: [\"auth\" ,\"regression\"]\n", 1),
		five[:fourth] + strings.Replace(five[fourth:], labels, "    labels: [\"auth\",  \"regression\"]\n", 1),
		five[:fourth] + strings.Replace(five[fourth:], "    status: \"analyzed\"\n", "    status: \"analyzed\"\n    status: \"analyzed\"\n", 1),
		strings.NewReplacer(
			"000001\"\n"+labels, "000001\"\n"+labels+"    ratio: 1.5\n",
			"000002\"\n"+labels, "000002\"\n"+labels+"    ratio: nan\n",
			"000003\"\n"+labels, "000003\"\n"+labels+"    ratio: nan\n",
			"000004\"\n"+labels, "000004\"\n"+labels+"    ratio: 1.5\n").Replace(five),
	} {
		if s == five {
			f.Fatal("a seed is the file unchanged")
		}
		for _, op := range []int{0, 6, 10, 11} {
			f.Add([]byte(s), uint8(op))
		}
	}
	// import-legacy on items its files name that lack a field it copies
	// (each item of the five-item file without one of its fields, or
	// with status below source instead of beside it), and on the same
	// file whole.
	dropped := five
	for item, field := range map[string]string{"000000": "status", "000002": "title", "000003": "url", "000004": "source"} {
		at := strings.Index(dropped, "  \"slack:C42:1719900000."+item+"\":")
		line := strings.Index(dropped[at:], "    "+field+": ")
		if at < 0 || line < 0 {
			f.Fatalf("no %s in item %s", field, item)
		}
		end := strings.IndexByte(dropped[at+line:], '\n')
		dropped = dropped[:at+line] + dropped[at+line+end+1:]
	}
	below := strings.Replace(five, "    source: \"slack:C42\"\n    status: \"analyzed\"\n", "    source:\n      status: \"analyzed\"\n", 1)
	if below == five {
		f.Fatal("no status line after a source line")
	}
	for op, args := range splitOps {
		if args[0] == "import-legacy" {
			for _, s := range []string{five, dropped, below} {
				f.Add([]byte(s), uint8(op))
			}
		}
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

// runCLIWhole is runCLI, with every state file loaded whole (sweepfast's
// option) when whole is set.
func runCLIWhole(whole bool, argv []string) (int, string, string) {
	ctx := context.Background()
	if whole {
		ctx = sweepfast.WithWholeFile(ctx)
	}
	var stdout, stderr bytes.Buffer
	rc := sweepcli.MainContext(ctx, argv, &stdout, &stderr)
	return rc, stdout.String(), stderr.String()
}

// splitRun runs args on a fresh copy of file and describes the outcome.
func splitRun(t *testing.T, file []byte, args []string, whole bool) string {
	dir := memdir.TempDir(t) // fsync is free there: the oracle is not about durability
	state := handEdited(t, dir, file)
	if args[0] == "import-legacy" {
		args = slices.Clone(args)
		args[2] = filepath.Join(dir, args[2])
		mustWrite(t, args[2], []byte(legacyFiles[filepath.Base(args[2])]))
	}
	rc, stdout, stderr := runCLIWhole(whole, append([]string{args[0], "--state", state}, args[1:]...))
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

// TestPythonWrittenSplit: the raw file of each python-written fixture
// (the bytes the Python engine wrote) and the benchmark's file in that
// writer's forms (pythonSeeds) give, through every subcommand of
// splitOps and every command a recording ran, the same exit status,
// stdout, stderr and file by the fast path as by the whole file; and each
// recording replayed on its raw file, both ways, gives the recorded exit
// status and stdout at every step, and the recorded file wherever a step
// wrote (internal/cli/sweepcli's TestFixtureReplay holds the built binary to
// the recording too, an unwritten raw file included).
func TestPythonWrittenSplit(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testfixtures.Dir(t, "sweep"), "python-written", "*.json"))
	type step struct {
		Kind       string   `json:"kind"`
		Args       []string `json:"args"`
		RC         int      `json:"rc"`
		Stdout     string   `json:"stdout"`
		StateAfter *string  `json:"state_after"`
		ContentB64 *string  `json:"content_b64"`
	}
	ops := splitOps
	var recorded [][]step
	for _, p := range files {
		var fx struct{ Steps []step }
		b, err := os.ReadFile(p)
		if err != nil || json.Unmarshal(b, &fx) != nil {
			t.Fatalf("%s: %v", p, err)
		}
		recorded = append(recorded, fx.Steps)
		for _, st := range fx.Steps {
			if st.Kind == "run" && len(st.Args) >= 3 && st.Args[1] == "--state" {
				ops = append(ops, append([]string{st.Args[0]}, st.Args[3:]...))
			}
		}
	}
	for i, file := range pythonSeeds(t) {
		for _, args := range ops {
			fast := splitRun(t, []byte(file), args, false)
			if whole := splitRun(t, []byte(file), args, true); fast != whole {
				t.Errorf("file %d, %q:\nfast path:  %s\nwhole file: %s", i, args, fast, whole)
			}
		}
	}
	for i, steps := range recorded {
		for _, whole := range []bool{false, true} {
			state := filepath.Join(memdir.TempDir(t), "state.yml")
			for j, st := range steps {
				switch {
				case st.Kind == "write" && st.ContentB64 != nil:
					raw, err := base64.StdEncoding.DecodeString(*st.ContentB64)
					if err != nil {
						t.Fatal(err)
					}
					mustWrite(t, state, raw)
					continue
				case st.Kind != "run" || len(st.Args) < 3 || st.Args[1] != "--state":
					t.Fatalf("%s: step %d is not a write of the raw file or a run on it", files[i], j+1)
				}
				before, _ := os.ReadFile(state)
				rc, stdout, _ := runCLIWhole(whole, append([]string{st.Args[0], "--state", state}, st.Args[3:]...))
				after, _ := os.ReadFile(state)
				if st.StateAfter == nil {
					t.Fatalf("%s: step %d records no file", files[i], j+1)
				}
				if rc != st.RC || stdout != st.Stdout || string(after) != *st.StateAfter && !bytes.Equal(after, before) {
					t.Errorf("%s, whole file %v, step %d %q: rc %d, stdout %q, file\n%s\nwant rc %d, stdout %q, file\n%s", filepath.Base(files[i]), whole, j+1, st.Args[0], rc, stdout, after, st.RC, st.Stdout, *st.StateAfter)
				}
			}
		}
	}
}

// pythonSeeds are files in the reference (Python) writer's forms that are
// not Emit's, which the fast path keeps in the reduced text (a YAML 1.1
// word as a bare key, a bare nan, inf or -inf, the characters of D6 raw in
// a quoted key, a string or an inline list, below the top level): the
// raw files of the python-written fixtures, and the benchmark's file with
// such lines in an item the commands touch, in one beside it, in a map
// inside an item, in sources, lease and last_run, and near misses that
// the fast path must decline (an odd indent, a stray deeper line, the
// word as an items entry's own key or a top-level one).
func pythonSeeds(tb testing.TB) []string {
	seeds := pythonWrittenRaw(tb)
	base := string(readTextBase())
	item := func(i int) string { return fmt.Sprintf("    id: \"1719900000.%06d\"\n", i) }
	labels := "    labels: [\"auth\", \"regression\"]\n"
	edits := [][][2]string{
		{{item(2), "    N: 1\n" + item(2)}}, // beside the upserted item, the one cursor-advance reads
		{{item(1), "    N: 1\n    Null: null\n" + item(1)}},
		{{item(0) + labels, item(0) + labels + "    meta:\n      No: 1\n      OFF: 0\n      True: \"t\"\n"}},
		{{item(1) + labels, "    huge: inf\n" + item(1) + labels + "    min: -inf\n    ratio: nan\n    samples: [NaN, -Infinity, 2.5]\n"}},
		{{"sources:\n", "sources:\n  off:\n    cursor: \"1\"\n"}},
		{{"  ttl_minutes: 60\n", "  ttl_minutes: 60\n  True: \"t\"\n"}},
		{{"\"regression\"]\n  \"slack:C42:1719900000.000001\"", "\"regression\"]\n    ratio: nan\n  \"slack:C42:1719900000.000001\""}},
		{{"    status: \"analyzed\"\n    title: \"Item 2", "    status: \"closed\"\n    title: \"Item 2"}, {item(2), "    N: 1\n" + item(2)}},
		{{"    status: \"analyzed\"\n    title: \"Item 0", "    status: \"closed\"\n    title: \"Item 0"}, {item(2), "    N: 1\n" + item(2)}},
		{{"Item 2: login page", "Item 2:\u2028login\u0085page\x7f"}, {item(2), "    \"a\u0090b\": 1\n" + item(2)}},                          // D6 raw
		{{"Item 2: login page", "Item 2:\u2028login\tpage"}},                                                                                // a raw tab
		{{"Item 2: login page", "Item 2:\u2028login\\u0041page"}},                                                                           // an escape neither writer writes
		{{labels + "  \"slack:C42:1719900000.000001\"", "    labels: [\"auth\u2028\", \"regression\"]\n  \"slack:C42:1719900000.000001\""}}, // D6 raw in a list
		{{labels + "  \"slack:C42:1719900000.000001\"", "    labels: [\"auth\u2028\",\"regression\"]\n  \"slack:C42:1719900000.000001\""}},  // and spelled otherwise
		{{item(2), "     N: 1\n" + item(2)}},                                                                                                // an odd indent
		{{item(2), "      N: 1\n" + item(2)}},                                                                                               // a stray deeper line
		{{item(2), "    N: 1 \n" + item(2)}},                                                                                                // a trailing space
		{{item(2), "    N:\n" + item(2)}},                                                                                                   // an empty map
		{{item(2), "    x: NaN\n" + item(2)}},                                                                                               // CORRUPT outside a list
		{{item(2), "    \"Nx\": 1\n" + item(2)}},                                                                                            // a quoted key Emit writes bare
		{{"items:\n", "items:\n  N:\n    a: 1\n"}},
		{{"items:\n", "items:\n  \"a:1\": nan\n"}},        // an items entry's own value        // an items entry's own key
		{{"lease:\n", "N: 1\nlease:\n"}},                  // a top-level key
		{{"  ttl_minutes: 60\n", "  ttl_minutes: nan\n"}}, // the lease's TTL a string
	}
	// All of the forms at once (edits 0 to 5), two items closed.
	all := base
	for _, e := range append(edits[:6:6], edits[7][:1], edits[8][:1]) {
		for _, r := range e {
			all = strings.Replace(all, r[0], r[1], 1)
		}
	}
	seeds = append(seeds, all+"last_run:\n  timestamp: \"t\"\n  outcome: \"completed\"\n  writer: \"w1\"\n  counts:\n    Y: 2\n    no: 1\n")
	for _, e := range edits {
		s := base
		for _, r := range e {
			if !strings.Contains(s, r[0]) {
				tb.Fatalf("the benchmark's file lacks %q", r[0])
			}
			s = strings.Replace(s, r[0], r[1], 1)
		}
		seeds = append(seeds, s)
	}
	return seeds
}

// pythonWrittenRaw are the raw files of the python-written fixtures: the
// bytes the Python engine wrote.
func pythonWrittenRaw(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(testfixtures.Dir(tb, "sweep"), "python-written", "*.json"))
	if len(files) == 0 {
		tb.Fatal("no python-written fixtures")
	}
	var raws []string
	for _, p := range files {
		var fx struct {
			Steps []struct {
				ContentB64 *string `json:"content_b64"`
			} `json:"steps"`
		}
		b, err := os.ReadFile(p)
		if err != nil || json.Unmarshal(b, &fx) != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		for _, st := range fx.Steps {
			if st.ContentB64 != nil {
				raw, err := base64.StdEncoding.DecodeString(*st.ContentB64)
				if err != nil {
					tb.Fatal(err)
				}
				raws = append(raws, string(raw))
			}
		}
	}
	return raws
}
