// Command sweepbench times the built sweep-state binary on large state
// files and sets each command beside its floor: reading that many bytes
// and printing them (read), and reading them and replacing the file
// durably with the same bytes (upsert-item: a temporary file written and
// fsynced, renamed over the state, the directory fsynced), which any
// engine that rewrites a YAML file in place must at least pay. It reports
// the median wall time (process start to exit), the median CPU time and
// the peak RSS of the child, the floor, and the growth from the smallest
// size (linear is the goal: 10x the items, at most 12x the time).
//
//	go run ./tools/sweepbench                    # 10,000 and 100,000 items, 5 runs
//	go run ./tools/sweepbench -items 10000 -runs 9
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
		err = run(*itemsFlag, *runs, *bin)
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

func run(itemsFlag string, runs int, bin string) error {
	var sizes []int
	for _, s := range strings.Split(itemsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad item count %q", s)
		}
		sizes = append(sizes, n)
	}
	if runs < 1 {
		return errors.New("runs must be at least 1")
	}
	work, err := os.MkdirTemp("", "sweepbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin, err = childstat.CLI(work, "./cmd/sweep-state", bin); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("| items | command | file MiB | median wall ms | median CPU ms | median / max peak RSS MiB | floor wall ms | floor CPU ms | x floor (wall) | x %d items (wall) | x %d items (CPU) |\n", sizes[0], sizes[0])
	fmt.Printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	type base struct{ wall, cpu time.Duration }
	first := map[string]base{}
	for _, n := range sizes {
		dir := filepath.Join(work, strconv.Itoa(n))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		state := filepath.Join(dir, "state.yml")
		if out, err := exec.Command(self, "-gen", state, "-items", strconv.Itoa(n)).CombinedOutput(); err != nil {
			return fmt.Errorf("generating %d items: %v: %s", n, err, out)
		}
		for _, sub := range []string{"read", "upsert-item"} {
			s, err := series(runs, func(r int) *exec.Cmd {
				args := []string{"read", "--state", state}
				if sub == "upsert-item" {
					args = []string{"upsert-item", "--state", state, "--source", "slack:C42",
						"--id", fmt.Sprintf("new-%d", r), "--json", `{"status": "ingested", "title": "bench"}`,
						"--writer", "w1", "--now", "2026-07-02T12:01:00Z"}
				}
				return exec.Command(bin, args...)
			}, "OK\n")
			if err != nil {
				return fmt.Errorf("%d items, %s: %w", n, sub, err)
			}
			f, err := series(runs, func(int) *exec.Cmd { return exec.Command(self, "-floor", sub, "-state", state) }, "")
			if err != nil {
				return fmt.Errorf("%d items, floor of %s: %w", n, sub, err)
			}
			fi, err := os.Stat(state)
			if err != nil {
				return err
			}
			growth, cpuGrowth := "", ""
			if b, ok := first[sub]; ok {
				growth = fmt.Sprintf("%.1f", float64(s.Wall)/float64(b.wall))
				cpuGrowth = fmt.Sprintf("%.1f", float64(s.CPU)/float64(b.cpu))
			} else {
				first[sub] = base{s.Wall, s.CPU}
			}
			fmt.Printf("| %d | %s | %.1f | %.1f | %.1f | %.1f / %.1f | %.1f | %.1f | %.2f | %s | %s |\n", n, sub,
				float64(fi.Size())/(1<<20), ms(s.Wall), ms(s.CPU), mib(s.RSSKiB), mib(s.MaxRSSKB),
				ms(f.Wall), ms(f.CPU), float64(s.Wall)/float64(f.Wall), growth, cpuGrowth)
		}
		os.RemoveAll(dir)
	}
	return nil
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
