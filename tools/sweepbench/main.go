// Command sweepbench times the built sweep-state binary on large state
// files and sets each command beside its floor: reading that many bytes
// and printing them (read, cursor-get, validate: the commands that write
// nothing), and reading them and replacing the file durably with the same
// bytes (upsert-item, cursor-advance, lease-acquire, run-record: a
// temporary file written and fsynced, renamed over the state, the
// directory fsynced), which any engine that rewrites a YAML file in place
// must at least pay. It reports the median wall time (process start to
// exit), the median CPU time and the peak RSS of the child, the floor, the
// ratios the goal of issue 20 is stated in (CPU time over the floor's, at
// most 3; peak RSS over the file size), and the growth from the smallest
// size (linear is the goal: 10x the items, at most 11x the CPU time).
//
//	go run ./tools/sweepbench                    # 10,000 and 100,000 items, 5 runs, read and upsert-item
//	go run ./tools/sweepbench -items 10000 -runs 9
//	go run ./tools/sweepbench -commands all      # every subcommand that loads the file
//	go run ./tools/sweepbench -commands all -goal   # and say which rows miss the goal (exit 1 if any)
//
// State files are built by a child run of this tool (-gen), so this
// process keeps a small peak RSS (a child started by os/exec inherits it
// on Linux, see tools/ledgerbench). The machine may be shared: wall times
// vary with the load, CPU times less; take medians of several runs.
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
	"strconv"
	"strings"
	"time"

	"github.com/stateguard/stateguard/internal/benchseed"
	"github.com/stateguard/stateguard/internal/childstat"
)

func main() {
	itemsFlag := flag.String("items", "10000,100000", "comma-separated item counts")
	runs := flag.Int("runs", 5, "measured runs per command and size (median reported)")
	commandsFlag := flag.String("commands", "read,upsert-item", "comma-separated subcommands, or all")
	goalFlag := flag.Bool("goal", false, "add a column saying which goal of issue 20 a row misses, and exit 1 if any does")
	bin := flag.String("bin", "", "sweep-state binary (default: go build ./cmd/sweep-state)")
	gen := flag.String("gen", "", "internal: write a state file of -items items at this path and exit")
	floor := flag.String("floor", "", "internal: run the floor of read or upsert-item on -state and exit")
	state := flag.String("state", "", "internal: the state file of -floor")
	flag.Parse()
	var err error
	switch {
	case *gen != "":
		var n int
		if n, err = strconv.Atoi(*itemsFlag); err == nil {
			err = os.WriteFile(*gen, benchseed.SweepState(n), 0o600)
		}
	case *floor != "":
		err = runFloor(*floor, *state)
	default:
		var missed bool
		if missed, err = run(*itemsFlag, *commandsFlag, *runs, *bin, *goalFlag); err == nil && missed {
			fmt.Println("\nsome rows miss the goal")
			os.Exit(1)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sweepbench:", err)
		os.Exit(1)
	}
}

// runFloor is the floor of one command on the state file p: read streams
// the file to stdout; upsert-item reads it and replaces it durably with
// the same bytes.
func runFloor(name, p string) error {
	switch name {
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

// The goal of issue 20: CPU time at most goalFloor times the floor's,
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

func run(itemsFlag, commandsFlag string, runs int, bin string, goal bool) (missed bool, err error) {
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
		if out, err := exec.Command(self, "-gen", state, "-items", strconv.Itoa(n)).CombinedOutput(); err != nil {
			return false, fmt.Errorf("generating %d items: %v: %s", n, err, out)
		}
		for _, c := range cmds {
			fi, err := os.Stat(state)
			if err != nil {
				return false, err
			}
			s, err := series(runs, func(r int) *exec.Cmd {
				return exec.Command(bin, append([]string{c.name, "--state", state}, c.args(r)...)...)
			}, "OK\n")
			if err != nil {
				return false, fmt.Errorf("%d items, %s: %w", n, c.name, err)
			}
			f, err := series(runs, func(int) *exec.Cmd { return exec.Command(self, "-floor", c.floor, "-state", state) }, "")
			if err != nil {
				return false, fmt.Errorf("%d items, floor of %s: %w", n, c.name, err)
			}
			growth, cpuGrowth := "", ""
			cpuGrowthRatio := 0.0
			if b, ok := first[c.name]; ok {
				cpuGrowthRatio = float64(s.CPU) / float64(b.cpu)
				growth = fmt.Sprintf("%.1f", float64(s.Wall)/float64(b.wall))
				cpuGrowth = fmt.Sprintf("%.1f", float64(s.CPU)/float64(b.cpu))
			} else {
				first[c.name] = base{s.Wall, s.CPU}
			}
			verdict := ""
			if goal {
				v := misses(float64(s.CPU)/float64(f.CPU), cpuGrowthRatio, s.MaxRSSKB, fi.Size())
				missed = missed || v != "ok"
				verdict = " " + v + " |"
			}
			fmt.Printf("| %d | %s | %.1f | %.1f | %.1f | %.1f / %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %s | %s |%s\n", n, c.name,
				float64(fi.Size())/(1<<20), ms(s.Wall), ms(s.CPU), mib(s.RSSKiB), mib(s.MaxRSSKB),
				ms(f.Wall), ms(f.CPU), float64(s.CPU)/float64(f.CPU), float64(s.Wall)/float64(f.Wall),
				float64(s.MaxRSSKB)*1024/float64(fi.Size()), cpuGrowth, growth, verdict)
		}
		os.RemoveAll(dir)
	}
	return missed, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(kib int64) float64      { return float64(kib) / 1024 }

// series runs runs children and summarizes them; each must exit 0 with
// stdout starting with prefix.
func series(runs int, command func(run int) *exec.Cmd, prefix string) (childstat.Summary, error) {
	var samples []childstat.Sample
	for r := 0; r < runs; r++ {
		cmd := command(r)
		var out prefixWriter
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil || !strings.HasPrefix(string(out.head), prefix) {
			return childstat.Summary{}, fmt.Errorf("%v: %q %q", err, out.head, stderr.String())
		}
		samples = append(samples, childstat.Of(cmd.ProcessState, wall))
	}
	return childstat.Summarize(samples), nil
}

// prefixWriter keeps the first 40 bytes written to it and drops the rest.
type prefixWriter struct{ head []byte }

func (w *prefixWriter) Write(p []byte) (int, error) {
	if n := 40 - len(w.head); n > 0 {
		w.head = append(w.head, p[:min(n, len(p))]...)
	}
	return len(p), nil
}
