// Command ledgerbench times the built task-state-guard binary on seeded
// ledgers: one create, a reconcile, a reconcile --dry-run and a doctor, each
// on a fresh copy of the seeded database, reporting the median wall time
// and the peak resident set size of the child process.
//
//	go run ./tools/ledgerbench                      # 20,000 and 100,000 tasks, 5 runs
//	go run ./tools/ledgerbench -sizes 20000 -runs 9 -bin ./task-state-guard
//
// The workload comes from ledger.SeedBenchmark (30% queued, 30% running and
// stale, 40% terminal with a pending delivery, half of those internal). The
// CLI runs with its test clock pinned to the seeding instant, so every run
// makes the same decisions. Wall time is measured here, outside any
// decision path; it is the one thing this tool is for.
//
// Peak RSS comes from the kernel's rusage of the child. On Linux a child
// started by os/exec (vfork-style clone) inherits this process's own peak
// RSS at exec, so this process keeps its own peak small: the ledgers are
// seeded by a child run of this tool (-seed) and copied by streaming.
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
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/cli"
)

// seedNow is the instant the ledger is seeded for and the CLI's pinned
// clock (2023-11-14T22:13:20Z).
const seedNow = 1700000000.0

// measured is one benchmarked command with its targets at 20,000 tasks
// (zero: no target).
type measured struct {
	name       string
	args       []string
	wantStatus int
	targetMS   float64
	targetMiB  float64
}

var commands = []measured{
	{"create", []string{"create"}, 0, 10, 0},
	{"reconcile", []string{"reconcile"}, 0, 250, 0},
	{"reconcile --dry-run", []string{"reconcile", "--dry-run"}, 0, 150, 0},
	{"doctor", []string{"doctor"}, 0, 150, 40},
}

type sample struct {
	wall   time.Duration
	rssKiB int64
}

func main() {
	sizesFlag := flag.String("sizes", "20000,100000", "comma-separated task counts")
	runs := flag.Int("runs", 5, "measured runs per command and size (median reported)")
	bin := flag.String("bin", "", "task-state-guard binary (default: go build ./cmd/task-state-guard)")
	seed := flag.String("seed", "", "internal: seed the ledger at this path with -sizes tasks and exit")
	flag.Parse()
	if *seed != "" {
		n, err := strconv.Atoi(*sizesFlag)
		if err == nil {
			err = ledger.SeedBenchmark(*seed, n, seedNow)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ledgerbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*sizesFlag, *runs, *bin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ledgerbench:", err)
		os.Exit(1)
	}
}

func run(sizesFlag string, runs int, bin string, out io.Writer) error {
	var sizes []int
	for _, s := range strings.Split(sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad size %q", s)
		}
		sizes = append(sizes, n)
	}
	if runs < 1 {
		return errors.New("runs must be at least 1")
	}
	work, err := os.MkdirTemp("", "ledgerbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "task-state-guard")
		build := exec.Command("go", "build", "-o", bin, "./cmd/task-state-guard")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building the CLI: %w", err)
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return err
	}

	fmt.Fprintf(out, "| tasks | command | median wall ms | median peak RSS MiB | max peak RSS MiB | target |\n")
	fmt.Fprintf(out, "|---:|---|---:|---:|---:|---|\n")
	for _, n := range sizes {
		seeded := filepath.Join(work, fmt.Sprintf("seed-%d", n), "tasks.sqlite")
		if err := seedInChild(seeded, n); err != nil {
			return fmt.Errorf("seeding %d tasks: %w", n, err)
		}
		info, err := os.Stat(seeded)
		if err != nil {
			return err
		}
		if err := assertSeedShape(bin, work, seeded, n); err != nil {
			return err
		}
		for _, c := range commands {
			var samples []sample
			for r := 0; r < runs; r++ {
				s, err := measureOnce(bin, work, seeded, c)
				if err != nil {
					return fmt.Errorf("%d tasks, %s: %w", n, c.name, err)
				}
				samples = append(samples, s)
			}
			wall, rss, maxRSS := summarize(samples)
			fmt.Fprintf(out, "| %d | %s | %.1f | %.1f | %.1f | %s |\n", n, c.name,
				float64(wall.Microseconds())/1000, float64(rss)/1024, float64(maxRSS)/1024, verdict(n, c, wall, maxRSS))
		}
		fmt.Fprintf(out, "| %d | (database size) | %.1f MiB | | | |\n", n, float64(info.Size())/(1<<20))
	}
	return nil
}

// seedInChild seeds n tasks at path in a child run of this program, so the
// seeding's memory never counts towards this process's peak RSS (which a
// measured child would inherit, see the package comment).
func seedInChild(path string, n int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-seed", path, "-sizes", strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// freshCopy streams the seeded file into a new private directory and
// flushes it, so the measured command's own fsync does not pay for the
// copy's dirty pages.
func freshCopy(work, seeded string) (string, error) {
	dir, err := os.MkdirTemp(work, "run-")
	if err != nil {
		return "", err
	}
	db := filepath.Join(dir, "tasks.sqlite")
	src, err := os.Open(seeded)
	if err != nil {
		return "", err
	}
	defer src.Close()
	f, err := os.OpenFile(db, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return db, os.Chmod(db, 0o600)
}

func cliCommand(bin, db string, args []string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"--db", db}, args...)...)
	cmd.Env = append(os.Environ(), cli.TestClockEnv+"=1", cli.TestNowEnv+"="+strconv.FormatFloat(seedNow, 'f', -1, 64))
	return cmd
}

// measureOnce times one command on a fresh copy; the copy is removed
// afterwards so disk use stays flat.
func measureOnce(bin, work, seeded string, c measured) (sample, error) {
	db, err := freshCopy(work, seeded)
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(filepath.Dir(db))
	var stdout, stderr bytes.Buffer
	cmd := cliCommand(bin, db, c.args)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	status := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		status = exitErr.ExitCode()
	} else if err != nil {
		return sample{}, err
	}
	if status != c.wantStatus || stderr.Len() != 0 || !bytes.HasPrefix(stdout.Bytes(), []byte("{")) {
		return sample{}, fmt.Errorf("exit %d, output %q", status, stdout.String())
	}
	return sample{wall: wall, rssKiB: peakRSSKiB(cmd.ProcessState)}, nil
}

// assertSeedShape checks, once per size, that the seeded ledger is healthy
// and that a reconcile has work to do, so the timings measure real work.
func assertSeedShape(bin, work, seeded string, n int) error {
	db, err := freshCopy(work, seeded)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(db))
	out, err := cliCommand(bin, db, []string{"reconcile", "--dry-run"}).Output()
	if err != nil {
		return fmt.Errorf("dry run on the seed: %w", err)
	}
	if !bytes.Contains(out, []byte(fmt.Sprintf(`"active_examined":%d,`, n*6/10))) {
		return fmt.Errorf("unexpected seed shape: %s", out)
	}
	return nil
}

func summarize(samples []sample) (medianWall time.Duration, medianRSS, maxRSS int64) {
	walls := make([]time.Duration, len(samples))
	rss := make([]int64, len(samples))
	for i, s := range samples {
		walls[i], rss[i] = s.wall, s.rssKiB
		if s.rssKiB > maxRSS {
			maxRSS = s.rssKiB
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	return walls[len(walls)/2], rss[len(rss)/2], maxRSS
}

// verdict compares against the targets, which are stated for 20,000 tasks;
// larger sizes are scaled linearly (the "linear growth" target).
func verdict(n int, c measured, wall time.Duration, maxRSSKiB int64) string {
	scale := float64(n) / 20000
	if c.name == "create" || scale < 1 {
		scale = 1 // one insert does not scale with the table
	}
	var parts []string
	ok := true
	if c.targetMS > 0 {
		limit := c.targetMS * scale
		parts = append(parts, fmt.Sprintf("< %.0f ms", limit))
		ok = ok && float64(wall.Microseconds())/1000 < limit
	}
	if c.targetMiB > 0 {
		limit := c.targetMiB * scale
		parts = append(parts, fmt.Sprintf("< %.0f MiB", limit))
		ok = ok && float64(maxRSSKiB)/1024 < limit
	}
	if ok {
		return strings.Join(parts, ", ") + " ok"
	}
	return strings.Join(parts, ", ") + " MISSED"
}
