// Command sweepbench times the built sweep-state binary on large state
// files and sets each command beside its floor: reading that many bytes
// and printing them (read, cursor-get, validate: the commands that write
// nothing), and reading them and replacing the file durably with the same
// bytes (upsert-item, cursor-advance, lease-acquire, run-record: a
// temporary file written and fsynced, renamed over the state, the
// directory fsynced), which any engine that rewrites a YAML file in place
// must at least pay. It reports the median wall time (process start to
// exit), the median CPU time and the peak RSS of the child, the floor, the
// ratios spec/sweep-state.md 19.2's goal is stated in (CPU time over the floor's, at
// most 3; peak RSS over the file size), and the growth from the smallest
// size (linear is the goal: 10x the items, at most 11x the CPU time).
//
//	go run ./tools/sweepbench                    # 10,000 and 100,000 items, 5 runs, read and upsert-item
//	go run ./tools/sweepbench -items 10000 -runs 9
//	go run ./tools/sweepbench -commands all      # every subcommand that loads the file
//	go run ./tools/sweepbench -commands all -goal   # and say which rows miss the goal (exit 1 if any)
//	go run ./tools/sweepbench -commands all -forms all   # also the general parser's path (below)
//
// -forms picks the files measured. canonical (the default) is the
// benchmark state in the engine's own form, which the fast paths read
// (spec/sweep-state.md §11, §19.2); its file grows by a few items over a
// series. hand-edited is the same document with a comment line at its
// top, which the fast paths take too (they leave comments out as the
// general parser does); reindented is the same document with its lease
// block indented four spaces (another writer's indent), which no fast
// path takes, so every command parses it whole with the general parser
// (yamlsubset.Parse) and a writing command emits it whole. Their rows
// say "(hand-edited)" and "(reindented)", and the file is put back before
// each run (a write makes it canonical). python-written is the file the Python
// engine writes for that document with, on one item in a hundred, a field
// named N and a NaN float, and a second source named off (bare N:, nan and
// off:, which this engine quotes): the fast paths keep those items and the
// sources in the parsed part; its rows say "(python-written)" and the file
// is put back before each run too. legacy is import-legacy of a JSON
// legacy file of the same items into the canonical state, which always
// parses the state whole; its floor also reads the legacy file, and its
// file size is both files'.
//
// merge is `merge` of three files of the same items: the canonical state
// as the base, and two sides that each changed one item in a hundred (a
// status on ours, a title on theirs), added a hundred items, and changed
// the lease (ours) or the cursor (theirs), so that every item is compared. Ours is put back before each run; its
// floor reads the base and theirs, then does what upsert-item's floor
// does, and its file size is the three files'.
//
// State files are built by a child run of this tool (-gen), so this
// process keeps a small peak RSS (a child started by os/exec inherits it
// on Linux, see tools/ledgerbench). The machine may be shared: wall times
// vary with the load, CPU times less; take medians of several runs. Each
// command's runs alternate with its floor's, so that a change of load
// moves both.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/childstat"
	"github.com/stateguard/stateguard/model/value"
)

func main() {
	itemsFlag := flag.String("items", "10000,100000", "comma-separated item counts")
	runs := flag.Int("runs", 5, "measured runs per command and size (median reported)")
	commandsFlag := flag.String("commands", "read,upsert-item", "comma-separated subcommands, or all")
	formsFlag := flag.String("forms", "canonical", "comma-separated files to measure the commands on: canonical, hand-edited, reindented, python-written, legacy (import-legacy), merge (merge), or all")
	goalFlag := flag.Bool("goal", false, "add a column saying which goal of spec/sweep-state.md 19.2 a row misses, and exit 1 if any does")
	bin := flag.String("bin", "", "sweep-state binary (default: go build ./cmd/sweep-state)")
	gen := flag.String("gen", "", "internal: write the -form file of -items items at this path and exit")
	form := flag.String("form", "canonical", "internal: the file -gen writes: canonical, hand-edited, reindented, python-written, legacy, merge-ours or merge-theirs")
	floor := flag.String("floor", "", "internal: run the floor of read, upsert-item or import-legacy on -state and exit")
	state := flag.String("state", "", "internal: the state file of -floor")
	legacy := flag.String("legacy", "", "internal: the legacy file of -floor import-legacy")
	flag.Parse()
	var err error
	switch {
	case *gen != "":
		var n int
		if n, err = strconv.Atoi(*itemsFlag); err == nil {
			err = genFile(*gen, *form, n)
		}
	case *floor != "":
		err = runFloor(*floor, *state, *legacy)
	default:
		var missed bool
		if missed, err = run(*itemsFlag, *commandsFlag, *formsFlag, *runs, *bin, *goalFlag); err == nil && missed {
			fmt.Println("\nsome rows miss the goal")
			os.Exit(1)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sweepbench:", err)
		os.Exit(1)
	}
}

// genFile writes the file of form f for n items at p.
func genFile(p, f string, n int) error {
	gens := map[string]func(int) []byte{
		"canonical":      benchseed.SweepState,
		"hand-edited":    benchseed.SweepHandEdited,
		"reindented":     benchseed.SweepReindented,
		"python-written": benchseed.SweepPythonWritten,
		"legacy":         benchseed.SweepLegacy,
		"merge-ours":     func(n int) []byte { return mergeSide(n, "ours") },
		"merge-theirs":   func(n int) []byte { return mergeSide(n, "theirs") },
	}
	g, ok := gens[f]
	if !ok {
		return fmt.Errorf("no form %q", f)
	}
	return os.WriteFile(p, g(n), 0o600)
}

// mergeSide is one side of the merge form: the canonical state of n items
// with one item in a hundred changed, a hundred new items, and ours' new
// lease or theirs' further cursor.
func mergeSide(n int, side string) []byte {
	doc, err := yamlsubset.Parse(benchseed.SweepState(n))
	if err != nil {
		panic(err) // the seed is the engine's own writing
	}
	itemsValue, _ := doc.Get("items")
	items := itemsValue.(*value.Map)
	offset, field := 0, "status"
	if side == "theirs" {
		offset, field = 50, "title"
	}
	for i := offset; i < items.Len(); i += 100 {
		_, v := items.At(i)
		item := v.(*value.Map)
		item.Set(field, side+" changed this")
	}
	for i := range 100 {
		item := value.NewMap()
		item.Set("source", "slack:C42")
		item.Set("title", fmt.Sprintf("new on %s", side))
		item.Set("id", fmt.Sprintf("%s-%d", side, i))
		items.Set(fmt.Sprintf("slack:C42:%s-%d", side, i), item)
	}
	if side == "ours" {
		lease := value.NewMap()
		lease.Set("writer", "w2")
		lease.Set("timestamp", "2026-07-02T14:00:00Z")
		lease.Set("ttl_minutes", value.Int(60))
		doc.Set("lease", lease)
	} else {
		sources, _ := doc.Get("sources")
		entry, _ := sources.(*value.Map).Get("slack:C42")
		entry.(*value.Map).Set("cursor", "1719900000.000200")
	}
	return yamlsubset.Emit(doc)
}

// runFloor is the floor of one command on the state file p: read streams
// the file to stdout; upsert-item reads it and replaces it durably with
// the same bytes; import-legacy reads the legacy file, then does what
// upsert-item's floor does.
func runFloor(name, p, legacy string) error {
	switch name {
	case "merge":
		for _, other := range []string{"base.yml", "theirs.yml"} {
			data, err := os.ReadFile(filepath.Join(filepath.Dir(p), other))
			if err != nil {
				return err
			}
			if len(data) == 0 {
				return errors.New("empty merge input")
			}
		}
		return runFloor("upsert-item", p, "")
	case "import-legacy":
		data, err := os.ReadFile(legacy)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return errors.New("empty legacy file")
		}
		return runFloor("upsert-item", p, "")
	case "read":
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(os.Stdout, f)
		return err
	case "upsert-item":
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(p), ".floor.*.tmp")
		if err != nil {
			return err
		}
		if _, err = tmp.Write(data); err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), p)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return err
		}
		dir, err := os.Open(filepath.Dir(p))
		if err != nil {
			return err
		}
		defer dir.Close()
		return dir.Sync()
	}
	return fmt.Errorf("no floor %q", name)
}

// benchArgs are the arguments of each measured subcommand on the bench
// state (lease writer w1, source slack:C42); run r of a series upserts a
// new item, so the file grows by a few items over a series. A command
// whose floor is "upsert-item" writes the file on every run.
var benchArgs = []struct {
	name, floor string
	args        func(r int) []string
}{
	{"read", "read", func(int) []string { return nil }},
	{"cursor-get", "read", func(int) []string { return []string{"--source", "slack:C42"} }},
	{"validate", "read", func(int) []string { return nil }},
	{"upsert-item", "upsert-item", func(r int) []string {
		return []string{"--source", "slack:C42", "--id", fmt.Sprintf("new-%d", r),
			"--json", `{"status": "ingested", "title": "bench"}`, "--writer", "w1", "--now", "2026-07-02T12:01:00Z"}
	}},
	{"cursor-advance", "upsert-item", func(int) []string {
		return []string{"--source", "slack:C42", "--to", "1719900000.000100", "--past-item", "1719900000.000000",
			"--writer", "w1", "--now", "2026-07-02T12:01:00Z"}
	}},
	{"lease-acquire", "upsert-item", func(int) []string {
		return []string{"--writer", "w1", "--now", "2026-07-02T12:01:00Z"}
	}},
	{"run-record", "upsert-item", func(r int) []string {
		return []string{"--writer", "w1", "--outcome", "completed", "--counts", fmt.Sprintf(`{"ingested": %d}`, r),
			"--timestamp", "2026-07-02T12:30:00Z"}
	}},
}

// The goal of spec/sweep-state.md 19.2: CPU time at most goalFloor times the floor's,
// growth from the first size at most goalGrowth times in CPU time, peak
// RSS at most goalRSS times the file size plus goalRSSConstMiB.
const (
	goalFloor       = 3.0
	goalGrowth      = 11.0
	goalRSS         = 1.5
	goalRSSConstMiB = 8.0
)

// misses names the goals a row misses, "ok" when none.
func misses(cpuRatio, growth float64, rssKiB, fileBytes int64) string {
	var m []string
	if cpuRatio > goalFloor {
		m = append(m, fmt.Sprintf("CPU > %gx floor", goalFloor))
	}
	if growth > goalGrowth {
		m = append(m, fmt.Sprintf("growth > %gx", goalGrowth))
	}
	if float64(rssKiB)*1024 > goalRSS*float64(fileBytes)+goalRSSConstMiB*(1<<20) {
		m = append(m, fmt.Sprintf("RSS > %gx file + %g MiB", goalRSS, goalRSSConstMiB))
	}
	if m == nil {
		return "ok"
	}
	return strings.Join(m, ", ")
}

// importLegacy is the import-legacy row of the legacy form: the legacy
// file's channel C42 mapped onto the bench source, its items onto the
// bench items (which have every field, so only the cursor changes).
var importLegacy = struct {
	name, floor string
	args        func(r int) []string
}{"import-legacy", "import-legacy", func(int) []string {
	return []string{"--file", "legacy.json", "--source-map", `{"C42": "slack:C42"}`}
}}

// mergeRow is the merge row of the merge form: base.yml and theirs.yml
// beside the state file, which is ours.
var mergeRow = struct {
	name, floor string
	args        func(r int) []string
}{"merge", "merge", func(int) []string {
	return []string{"--base", "base.yml", "--theirs", "theirs.yml", "--published", "theirs"}
}}

var formNames = []string{"canonical", "hand-edited", "reindented", "python-written", "legacy", "merge"}

func run(itemsFlag, commandsFlag, formsFlag string, runs int, bin string, goal bool) (missed bool, err error) {
	var sizes []int
	for _, s := range strings.Split(itemsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return false, fmt.Errorf("bad item count %q", s)
		}
		sizes = append(sizes, n)
	}
	type command = struct {
		name, floor string
		args        func(r int) []string
	}
	var cmds []command
	for _, name := range strings.Split(commandsFlag, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, c := range benchArgs {
			if c.name == name || commandsFlag == "all" {
				cmds = append(cmds, command(c))
				found = true
			}
		}
		if !found {
			return false, fmt.Errorf("no bench command %q", name)
		}
	}
	var forms []string
	for _, f := range strings.Split(formsFlag, ",") {
		f = strings.TrimSpace(f)
		if formsFlag == "all" {
			forms = formNames
			break
		}
		if !slices.Contains(formNames, f) {
			return false, fmt.Errorf("no form %q", f)
		}
		forms = append(forms, f)
	}
	if runs < 1 {
		return false, errors.New("runs must be at least 1")
	}
	work, err := os.MkdirTemp("", "sweepbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(work)
	if bin, err = childstat.CLI(work, "./cmd/sweep-state", bin); err != nil {
		return false, err
	}
	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	goalHead, goalRule := "", ""
	if goal {
		goalHead, goalRule = " goal |", "---|"
	}
	fmt.Printf("| items | command | file MiB | median wall ms | median CPU ms | median / max peak RSS MiB | floor wall ms | floor CPU ms | x floor (CPU) | x floor (wall) | peak RSS / file | x %d items (CPU) | x %d items (wall) |%s\n", sizes[0], sizes[0], goalHead)
	fmt.Printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s\n", goalRule)
	type base struct{ wall, cpu time.Duration }
	first := map[string]base{}
	for _, n := range sizes {
		dir := filepath.Join(work, strconv.Itoa(n))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return false, err
		}
		state := filepath.Join(dir, "state.yml")
		gen := func(p, form string) error {
			if out, err := exec.Command(self, "-gen", p, "-form", form, "-items", strconv.Itoa(n)).CombinedOutput(); err != nil {
				return fmt.Errorf("generating %d items (%s): %v: %s", n, form, err, out)
			}
			return nil
		}
		for _, form := range forms {
			// reset puts the form's file back before a run; the canonical
			// form keeps what the previous run wrote.
			reset := func() error { return nil }
			label, fcmds, extra := "%s", cmds, int64(0)
			pristine := state + ".pristine"
			switch form {
			case "canonical":
				if err = os.Remove(state); err == nil || errors.Is(err, os.ErrNotExist) {
					err = gen(state, form) // not through a link to another form's file
				}
			case "hand-edited", "reindented", "python-written":
				label = "%s (" + form + ")"
				err = gen(pristine, form)
			case "merge":
				fcmds = []command{mergeRow}
				err = gen(pristine, "merge-ours")
				for _, other := range [][2]string{{"base.yml", "canonical"}, {"theirs.yml", "merge-theirs"}} {
					if err == nil {
						err = gen(filepath.Join(dir, other[0]), other[1])
					}
					if err == nil {
						var fi os.FileInfo
						if fi, err = os.Stat(filepath.Join(dir, other[0])); err == nil {
							extra += fi.Size()
						}
					}
				}
			case "legacy":
				fcmds = []command{importLegacy}
				if err = gen(pristine, "canonical"); err == nil {
					err = gen(filepath.Join(dir, "legacy.json"), "legacy")
				}
				if err == nil {
					var fi os.FileInfo
					if fi, err = os.Stat(filepath.Join(dir, "legacy.json")); err == nil {
						extra = fi.Size()
					}
				}
			}
			if err != nil {
				return false, err
			}
			if form != "canonical" {
				// A hard link: the engine and the floor replace the file by
				// a rename, so the pristine copy stays as it was.
				reset = func() error {
					if err := os.Remove(state); err != nil && !errors.Is(err, os.ErrNotExist) {
						return err
					}
					return os.Link(pristine, state)
				}
				if err := reset(); err != nil {
					return false, err
				}
			}
			for _, c := range fcmds {
				name := fmt.Sprintf(label, c.name)
				fi, err := os.Stat(state)
				if err != nil {
					return false, err
				}
				size := fi.Size() + extra
				s, f, err := series(runs, func(r int) (*exec.Cmd, error) {
					stateFlag := "--state"
					if c.name == "merge" {
						stateFlag = "--ours" // merge writes its ours
					}
					cmd := exec.Command(bin, append([]string{c.name, stateFlag, state}, c.args(r)...)...)
					cmd.Dir = dir
					return cmd, reset()
				}, func() (*exec.Cmd, error) {
					return exec.Command(self, "-floor", c.floor, "-state", state, "-legacy", filepath.Join(dir, "legacy.json")), reset()
				})
				if err != nil {
					return false, fmt.Errorf("%d items, %s: %w", n, name, err)
				}
				growth, cpuGrowth := "", ""
				cpuGrowthRatio := 0.0
				if b, ok := first[name]; ok {
					cpuGrowthRatio = float64(s.CPU) / float64(b.cpu)
					growth = fmt.Sprintf("%.1f", float64(s.Wall)/float64(b.wall))
					cpuGrowth = fmt.Sprintf("%.1f", float64(s.CPU)/float64(b.cpu))
				} else {
					first[name] = base{s.Wall, s.CPU}
				}
				verdict := ""
				if goal {
					v := misses(float64(s.CPU)/float64(f.CPU), cpuGrowthRatio, s.MaxRSSKB, size)
					missed = missed || v != "ok"
					verdict = " " + v + " |"
				}
				fmt.Printf("| %d | %s | %.1f | %.1f | %.1f | %.1f / %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %s | %s |%s\n", n, name,
					float64(size)/(1<<20), ms(s.Wall), ms(s.CPU), mib(s.RSSKiB), mib(s.MaxRSSKB),
					ms(f.Wall), ms(f.CPU), float64(s.CPU)/float64(f.CPU), float64(s.Wall)/float64(f.Wall),
					float64(s.MaxRSSKB)*1024/float64(size), cpuGrowth, growth, verdict)
			}
		}
		os.RemoveAll(dir)
	}
	return missed, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(kib int64) float64      { return float64(kib) / 1024 }

// series runs the command and its floor runs times each, one after the
// other in turn, so that both meet the same load on a shared machine (a
// load that changed between two separate series moved the ratio by a
// third), and summarizes each. Every run must exit 0, the command's with
// stdout starting with its status word.
func series(runs int, command func(run int) (*exec.Cmd, error), floor func() (*exec.Cmd, error)) (cmd, flr childstat.Summary, err error) {
	var cmds, floors []childstat.Sample
	for r := 0; r < runs; r++ {
		s, err := child(func() (*exec.Cmd, error) { return command(r) }, "OK\n")
		if err != nil {
			return cmd, flr, err
		}
		cmds = append(cmds, s)
		if s, err = child(floor, ""); err != nil {
			return cmd, flr, fmt.Errorf("floor: %w", err)
		}
		floors = append(floors, s)
	}
	return childstat.Summarize(cmds), childstat.Summarize(floors), nil
}

// child runs one child and measures it; it must exit 0 with stdout
// starting with prefix.
func child(command func() (*exec.Cmd, error), prefix string) (childstat.Sample, error) {
	cmd, err := command()
	if err != nil {
		return childstat.Sample{}, err
	}
	var out prefixWriter
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil || !strings.HasPrefix(string(out.head), prefix) {
		return childstat.Sample{}, fmt.Errorf("%v: %q %q", err, out.head, stderr.String())
	}
	return childstat.Of(cmd.ProcessState, wall), nil
}

// prefixWriter keeps the first 40 bytes written to it and drops the rest.
type prefixWriter struct{ head []byte }

func (w *prefixWriter) Write(p []byte) (int, error) {
	if n := 40 - len(w.head); n > 0 {
		w.head = append(w.head, p[:min(n, len(p))]...)
	}
	return len(p), nil
}
