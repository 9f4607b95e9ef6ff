// Command ledgerbench times the built task-state-guard binary on seeded
// ledgers and sets each command beside its floor: the same work done
// directly through the SQLite driver with set-based SQL (floor.go). It
// reports, per size and command, the median wall time (process start to
// exit), the median CPU time (user + system) and the peak resident set
// size of the child, the floor's median, the ratio to the floor, the
// growth against the smallest size, and whether each row meets its target.
//
//	go run ./tools/ledgerbench                          # 20,000 and 200,000 tasks, 5 runs
//	go run ./tools/ledgerbench -large                   # adds 2,000,000 tasks (seeding takes minutes)
//	go run ./tools/ledgerbench -sizes 20000 -runs 9 -bin ./task-state-guard
//	go run ./tools/ledgerbench -only list -sizes 20000,2000000  # list's pages only
//
// The workload comes from internal/testsupport/benchseed (30% queued, 30% running and
// stale, 40% terminal with a pending delivery, half of those internal). The
// CLI runs with its test clock pinned to the seeding instant, so every run
// makes the same decisions. Wall time is measured here, outside any
// decision path; it is the one thing this tool is for.
//
// Commands that write much (reconcile) run on a fresh copy of the seeded
// file each time; create and start, which add or change one row, share one
// working copy (start takes another queued task each run); the read-only
// commands read the seeded file itself. The "library" rows call
// Doctor and the dry run through the Go API on a writable open, beside
// the CLI's read-only view. The floors' connections use synchronous=FULL
// by default, as the CLI's writable ones do (divergence L6).
//
// Peak RSS comes from the kernel's rusage of the child. On Linux a child
// started by os/exec (vfork-style clone) inherits this process's own peak
// RSS at exec, so this process keeps its own peak small: the ledgers are
// seeded by a child run of this tool (-seed) and copied by streaming.
//
// The machine may be shared: wall times vary with the load, CPU times
// less; take medians of several runs.
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
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/childstat"
)

// seedNow is the instant the ledger is seeded for and the CLI's pinned
// clock (2023-11-14T22:13:20Z).
const seedNow = 1700000000.0

// seededID is the id the benchmark seeding gives task i; task i is queued when
// i % 10 < 3.
func seededID(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }

// copyKind says which file a measured run works on.
type copyKind int

const (
	seededFile  copyKind = iota // read-only commands: the seeded file itself
	sharedCopy                  // small writes: one working copy per size
	freshCopyKd                 // large writes: a fresh copy per run
)

// measured is one benchmarked command.
type measured struct {
	name    string
	args    func(run int) []string    // CLI arguments after --db
	sized   func(n, run int) []string // instead of args: arguments for n tasks
	lib     string                    // instead of the CLI: this tool's -lib mode
	files   copyKind
	floor   string  // floor.go's name for the same work, "" for none
	linear  bool    // grows with the ledger (else constant)
	ms      float64 // target median wall ms at 20,000 tasks (0: none)
	ofFloor float64 // target ratio to the floor at 20,000 tasks (0: none)
}

func fixed(args ...string) func(int) []string { return func(int) []string { return args } }

var commands = []measured{
	{name: "create", args: fixed("create"), files: sharedCopy, floor: "create", ms: 6},
	{name: "start", args: func(run int) []string { return []string{"start", seededID(10 * (run + 1))} }, files: sharedCopy},
	{name: "get", args: fixed("get", seededID(0)), files: seededFile, floor: "get", ms: 5},
	{name: "children", args: fixed("children", seededID(0)), files: seededFile, ms: 5},
	{name: "reconcile", args: fixed("reconcile"), files: freshCopyKd, floor: "reconcile", linear: true, ofFloor: 1.2},
	{name: "reconcile --dry-run", args: fixed("reconcile", "--dry-run"), files: seededFile, floor: "dry-run", linear: true, ms: 50},
	{name: "doctor", args: fixed("doctor"), files: seededFile, floor: "doctor", linear: true, ofFloor: 1.2},
	{name: "dry run (library, writable open)", lib: "dry-run", files: sharedCopy, linear: true},
	{name: "doctor (library, writable open)", lib: "doctor", files: sharedCopy, linear: true},
	// list (spec 6.9): a first page of 100 with no filter, with a dense
	// filter (30% queued: the walk along the id), with a filter nothing
	// matches (the status index), with a time filter selecting the 50 s
	// after the first creation (the status index: 1,000 tasks at 20,000,
	// 10,000 at 2,000,000), and the last page of a time filter the walk
	// serves, which reads on to the end of the ids to find no more.
	{name: "list", args: fixed("list"), files: seededFile},
	{name: "list --status queued", args: fixed("list", "--status", "queued"), files: seededFile},
	{name: "list --status timed_out", args: fixed("list", "--status", "timed_out"), files: seededFile},
	{name: "list --updated-before first+50s", args: fixed("list", "--updated-before", strconv.FormatFloat(seedNow-100000+50, 'f', -1, 64)), files: seededFile},
	{name: "list --updated-before first+100s --after (last page)", sized: func(n, _ int) []string {
		matches := int(100 / seedStep(n))
		return []string{"list", "--updated-before", strconv.FormatFloat(seedNow-100000+100, 'f', -1, 64), "--after", seededID(matches - 10)}
	}, files: seededFile},
}

// seedStep is the seeding's time between two creations (benchseed's
// LedgerRows).
func seedStep(n int) float64 {
	if n > 200000 {
		return 10000 / float64(n)
	}
	return 0.05
}

type summary struct {
	wall, cpu     time.Duration
	rssKiB, maxKB int64
	failed        string
}

func main() {
	sizesFlag := flag.String("sizes", "20000,200000", "comma-separated task counts")
	large := flag.Bool("large", false, "also measure 2,000,000 tasks (seeding takes minutes and ~1 GB of disk)")
	runs := flag.Int("runs", 5, "measured runs per command and size (median reported)")
	bin := flag.String("bin", "", "task-state-guard binary (default: go build ./cmd/task-state-guard)")
	synchronous := flag.String("floor-synchronous", "FULL", "PRAGMA synchronous of the floors' connections")
	only := flag.String("only", "", "measure only the commands whose name starts with this (say, list)")
	keepSeeds := flag.String("keep-seeds", "", "keep the seeded ledgers in this directory and reuse them on later runs (read-only commands only)")
	seed := flag.String("seed", "", "internal: seed the ledger at this path with -sizes tasks and exit")
	floorName := flag.String("floor", "", "internal: run this floor on -db and exit")
	libName := flag.String("lib", "", "internal: run this library call on -db and exit")
	db := flag.String("db", "", "internal: the database of -floor and -lib")
	flag.Parse()
	var err error
	switch {
	case *seed != "":
		var n int
		if n, err = strconv.Atoi(*sizesFlag); err == nil {
			err = seedLedger(*seed, n)
		}
	case *floorName != "":
		err = runFloor(*floorName, *db, *synchronous)
	case *libName != "":
		n, _ := strconv.Atoi(*sizesFlag)
		err = runLibrary(*libName, *db, n)
	default:
		sizes := *sizesFlag
		if *large {
			sizes += ",2000000"
		}
		err = run(sizes, *runs, *bin, *synchronous, *only, *keepSeeds, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledgerbench:", err)
		os.Exit(1)
	}
}

// runLibrary opens db writable through the Go API and runs the doctor or
// the dry run once (or, for "shape", checks that the dry run on a seeded
// ledger of n tasks has the work the benchmark seeding promises).
func runLibrary(name, db string, n int) error {
	l, err := ledger.Open(db, ledger.Options{AllowExternalACL: runtime.GOOS == "windows", Clock: func() time.Time { return time.Unix(seedNow, 0) }})
	if err != nil {
		return err
	}
	defer l.Close()
	switch name {
	case "doctor":
		rep, err := l.Doctor()
		if err == nil && !rep.Healthy {
			err = errors.New("doctor: not healthy")
		}
		if err != nil {
			return err
		}
	case "dry-run":
		if _, err := l.Reconcile(ledger.ReconcileOptions{DryRun: true}); err != nil {
			return err
		}
	case "shape":
		rep, err := l.Reconcile(ledger.ReconcileOptions{DryRun: true})
		if err != nil {
			return err
		}
		if rep.ActiveExamined != n*6/10 || rep.TasksTimedOut != n*3/10 {
			return fmt.Errorf("unexpected seed shape: %+v", rep)
		}
	default:
		return fmt.Errorf("no library call %q", name)
	}
	fmt.Println("{}")
	return nil
}

func parseSizes(text string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad size %q", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

func run(sizesFlag string, runs int, bin, synchronous, only, keepSeeds string, out io.Writer) error {
	sizes, err := parseSizes(sizesFlag)
	if err != nil {
		return err
	}
	if runs < 1 {
		return errors.New("runs must be at least 1")
	}
	work, err := os.MkdirTemp("", "ledgerbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin, err = childstat.CLI(work, "./cmd/task-state-guard", bin); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "| tasks | command | median wall ms | median CPU ms | median / max peak RSS MiB | floor wall ms | floor CPU ms | floor peak RSS MiB | x floor (wall) | x floor (CPU) | x %d tasks (wall) | targets |\n", sizes[0])
	fmt.Fprintf(out, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	first := map[string]time.Duration{}
	for _, n := range sizes {
		sizeDir := filepath.Join(work, fmt.Sprintf("size-%d", n))
		seeded := filepath.Join(sizeDir, "seed", "tasks.sqlite")
		if keepSeeds != "" {
			seeded = filepath.Join(keepSeeds, fmt.Sprintf("seed-%d", n), "tasks.sqlite")
		}
		for _, d := range []string{sizeDir, filepath.Dir(seeded)} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		if _, err := os.Stat(seeded); err == nil && keepSeeds != "" {
			fmt.Fprintf(os.Stderr, "ledgerbench: reusing the %d-task seed in %s\n", n, keepSeeds)
		} else {
			start := time.Now()
			if err := seedInChild(self, seeded, n); err != nil {
				return fmt.Errorf("seeding %d tasks: %w", n, err)
			}
			fmt.Fprintf(os.Stderr, "ledgerbench: seeded %d tasks in %s\n", n, time.Since(start).Round(time.Millisecond))
		}
		info, err := os.Stat(seeded)
		if err != nil {
			return err
		}
		if err := assertSeedShape(self, sizeDir, seeded, n); err != nil {
			return err
		}
		shared, err := benchseed.CopyLedger(sizeDir, seeded)
		if err != nil {
			return err
		}
		for _, c := range commands {
			if !strings.HasPrefix(c.name, only) {
				continue
			}
			s := measure(runs, func(r int) (childstat.Sample, error) {
				return measureOnce(sizeDir, seeded, shared, c.files, func(db string) *exec.Cmd {
					if c.lib != "" {
						return exec.Command(self, "-lib", c.lib, "-db", db)
					}
					if c.sized != nil {
						return cliCommand(bin, db, c.sized(n, r))
					}
					return cliCommand(bin, db, c.args(r))
				})
			})
			var f summary
			if c.floor != "" {
				files := c.files
				if files == sharedCopy && c.floor != "create" {
					files = seededFile
				}
				if c.floor == "reconcile" || c.floor == "create" {
					files = freshCopyKd // the floor's create has a fixed id
				}
				f = measure(runs, func(int) (childstat.Sample, error) {
					return measureOnce(sizeDir, seeded, shared, files, func(db string) *exec.Cmd {
						return exec.Command(self, "-floor", c.floor, "-db", db, "-floor-synchronous", synchronous)
					})
				})
			}
			if n == sizes[0] && s.failed == "" {
				first[c.name] = s.wall
			}
			fmt.Fprintln(out, row(n, sizes[0], c, s, f, first[c.name]))
		}
		fmt.Fprintf(out, "| %d | (database size) | %.1f MiB | | | | | | | | | |\n", n, float64(info.Size())/(1<<20))
		os.RemoveAll(sizeDir)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(kib int64) float64      { return float64(kib) / 1024 }

// row renders one table row with its verdicts. Targets: at
// 20,000 tasks the absolute times and floor ratios of the commands table,
// and at most 40 MiB of peak RSS; above that, at most 96 MiB, and a
// median within 1.2x linear growth (120x from 20,000 to 2,000,000 tasks)
// for the commands that grow with the ledger, 2x for those that do not.
func row(n, smallest int, c measured, s, f summary, firstWall time.Duration) string {
	if s.failed != "" {
		return fmt.Sprintf("| %d | %s | failed: %s | | | | | | | | | |", n, c.name, s.failed)
	}
	var targets []string
	check := func(ok bool, text string) {
		if !ok {
			text += " MISSED"
		}
		targets = append(targets, text)
	}
	if n <= 20000 {
		check(mib(s.maxKB) <= 40, "RSS <= 40 MiB")
		if c.ms > 0 {
			check(ms(s.wall) <= c.ms, fmt.Sprintf("<= %g ms", c.ms))
		}
		if c.ofFloor > 0 && f.failed == "" && f.wall > 0 {
			check(float64(s.wall) <= c.ofFloor*float64(f.wall), fmt.Sprintf("<= %gx floor", c.ofFloor))
		}
	} else {
		check(mib(s.maxKB) <= 96, "RSS <= 96 MiB")
	}
	growth := ""
	if n != smallest && firstWall > 0 {
		g := float64(s.wall) / float64(firstWall)
		growth = fmt.Sprintf("%.1f", g)
		limit := 2.0
		if c.linear {
			limit = 1.2 * float64(n) / float64(smallest)
		}
		check(g <= limit, fmt.Sprintf("growth <= %.4gx", limit))
	}
	floorMS, floorCPU, floorRSS, ratio, cpuRatio := "", "", "", "", ""
	switch {
	case f.failed != "":
		floorMS = "failed: " + f.failed
	case f.wall > 0:
		floorMS = fmt.Sprintf("%.1f", ms(f.wall))
		floorCPU = fmt.Sprintf("%.1f", ms(f.cpu))
		floorRSS = fmt.Sprintf("%.1f", mib(f.rssKiB))
		ratio = fmt.Sprintf("%.2f", float64(s.wall)/float64(f.wall))
		if f.cpu > 0 {
			cpuRatio = fmt.Sprintf("%.2f", float64(s.cpu)/float64(f.cpu))
		}
	}
	return fmt.Sprintf("| %d | %s | %.1f | %.1f | %.1f / %.1f | %s | %s | %s | %s | %s | %s | %s |", n, c.name,
		ms(s.wall), ms(s.cpu), mib(s.rssKiB), mib(s.maxKB), floorMS, floorCPU, floorRSS, ratio, cpuRatio, growth, strings.Join(targets, ", "))
}

// measure takes runs samples and summarizes them; the first failure ends
// the series and is reported instead.
func measure(runs int, once func(run int) (childstat.Sample, error)) summary {
	var samples []childstat.Sample
	for r := 0; r < runs; r++ {
		s, err := once(r)
		if err != nil {
			msg := err.Error()
			if len(msg) > 80 {
				msg = msg[:80]
			}
			return summary{failed: strings.ReplaceAll(msg, "|", "/")}
		}
		samples = append(samples, s)
	}
	m := childstat.Summarize(samples)
	return summary{wall: m.Wall, cpu: m.CPU, rssKiB: m.RSSKiB, maxKB: m.MaxRSSKB}
}

// seedInChild seeds n tasks at path in a child run of this program, so the
// seeding's memory never counts towards this process's peak RSS (which a
// measured child would inherit, see the package comment).
func seedInChild(self, path string, n int) error {
	cmd := exec.Command(self, "-seed", path, "-sizes", strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func cliCommand(bin, db string, args []string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"--db", db}, args...)...)
	cmd.Env = append(os.Environ(), ledgercli.TestClockEnv+"=1", ledgercli.TestNowEnv+"="+strconv.FormatFloat(seedNow, 'f', -1, 64))
	return cmd
}

// measureOnce times one child on the file its copy kind names; a fresh
// copy is removed afterwards so disk use stays flat.
func measureOnce(work, seeded, shared string, kind copyKind, command func(db string) *exec.Cmd) (childstat.Sample, error) {
	db := seeded
	switch kind {
	case sharedCopy:
		db = shared
	case freshCopyKd:
		var err error
		if db, err = benchseed.CopyLedger(work, seeded); err != nil {
			return childstat.Sample{}, err
		}
		defer os.RemoveAll(filepath.Dir(db))
	}
	var stdout, stderr bytes.Buffer
	cmd := command(db)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	status := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		status = exitErr.ExitCode()
	} else if err != nil {
		return childstat.Sample{}, err
	}
	if status != 0 || stderr.Len() != 0 {
		return childstat.Sample{}, fmt.Errorf("exit %d, output %q %q", status, stdout.String(), stderr.String())
	}
	return childstat.Of(cmd.ProcessState, wall), nil
}

// assertSeedShape checks, once per size and in a child (see the package
// comment on peak RSS), that a reconcile has work to do, so the timings
// measure real work.
func assertSeedShape(self, work, seeded string, n int) error {
	db, err := benchseed.CopyLedger(work, seeded)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(db))
	out, err := exec.Command(self, "-lib", "shape", "-db", db, "-sizes", strconv.Itoa(n)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("checking the seed: %v: %s", err, out)
	}
	return nil
}

// seedLedger creates the ledger at path with impl/ledger's Open (the clock
// at seedNow) and fills it with benchseed's workload of n tasks.
func seedLedger(path string, n int) error {
	l, err := ledger.Open(path, ledger.Options{AllowExternalACL: runtime.GOOS == "windows", Clock: func() time.Time { return time.Unix(seedNow, 0) }})
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	return benchseed.LedgerRows(path, n, seedNow)
}
