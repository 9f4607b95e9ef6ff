// Command fuzzrun is the nightly fuzzing campaign: it runs every native fuzz
// target of the project for a fixed time each, several at once, keeps the
// corpus each target generates between nights, files every crasher as a
// regression seed, and prints one table.
//
//	go run ./tools/fuzzrun -fuzztime 30m -cache ~/fuzz-cache   # nightly
//	go run ./tools/fuzzrun -fuzztime 10s -parallel 1           # smoke (.ci/run)
//	go run ./tools/fuzzrun -run 'Ledger' -fuzztime 5m          # some targets
//
// Targets are listed with `go test -list ^Fuzz` over -pkgs and each runs as
// `go test PKG -run=^$ -fuzz=^NAME$ -fuzztime=T -fuzzminimizetime=M
// -parallel=W`. -parallel targets run at once (default: one per CPU), each
// with -workers fuzzing processes (default 1).
//
// Minimization: the toolchain shrinks every input that finds new coverage
// before it fuzzes on, for up to -fuzzminimizetime (60 s by default), and
// counts none of those runs. On the ledger's targets, where an input takes
// tens of milliseconds and, early in a campaign, one input in three finds
// new coverage in SQLite, that default left a campaign minimizing instead
// of exploring, at a few executions a second. fuzzrun gives each minimization
// -minimizetime (default 5 s), a crasher's included.
//
// SQLite's coverage: the ledger targets whose input is operations, SQL
// edits or a -wal (sqliteUnguided) are built with modernc's transpiled
// SQLite and its C library, the rest of modernc and the standard library
// left out of the coverage instrumentation, which cost them about 2.5
// times their CPU time per input and filled their campaigns with inputs
// that were new only to those counters; their oracles are unchanged
// (sqlitecover.go says how and why). -sqlitecover builds every target
// fully instrumented.
//
// Corpus cache: the Go toolchain keeps the inputs a target found
// interesting under $GOCACHE/fuzz/<import path>/<NAME>. With -cache DIR,
// fuzzrun copies DIR/<import path>/<NAME> there before the run and copies
// every entry back afterwards, so a CI cache of DIR carries the corpus from
// night to night without carrying the build cache.
//
// Crashers: the toolchain writes a failing input to the package's
// testdata/fuzz/<NAME>/, which is where a regression seed belongs; fuzzrun
// reports each new file there and, with -crashers DIR, also copies it to
// DIR/<import path>/<NAME>/ (for CI artifacts).
//
// The table has one row per target: executions, executions per second,
// corpus entries (new in this run, and total including the seeds), new
// crashers, and the result. The exit status is 1 when any target failed or
// left a crasher, 2 when the campaign could not start.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

func main() {
	if os.Getenv(toolexecEnv) == "1" {
		os.Exit(toolexec(os.Args[1:]))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the command line.
type config struct {
	fuzztime        time.Duration
	minimizetime    time.Duration
	pkgs            string
	parallel        int
	workers         int
	cache, crashers string
	run             *regexp.Regexp
	list            bool
	sqliteCover     bool // instrument SQLite for every target (sqlitecover.go)
	self            string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("fuzzrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var filter string
	fs.DurationVar(&c.fuzztime, "fuzztime", time.Minute, "time to fuzz each target")
	fs.DurationVar(&c.minimizetime, "minimizetime", 5*time.Second, "time to minimize each new corpus entry or crasher (go test -fuzzminimizetime)")
	fs.StringVar(&c.pkgs, "pkgs", "./fuzz/...", "packages holding the fuzz targets")
	fs.IntVar(&c.parallel, "parallel", runtime.NumCPU(), "targets fuzzed at the same time")
	fs.IntVar(&c.workers, "workers", 1, "fuzzing processes per target (go test -parallel)")
	fs.StringVar(&c.cache, "cache", "", "directory keeping each target's generated corpus between runs")
	fs.StringVar(&c.crashers, "crashers", "", "directory that also receives a copy of every new crasher")
	fs.StringVar(&filter, "run", "", "only targets whose name matches this regular expression")
	fs.BoolVar(&c.list, "list", false, "list the targets and exit")
	fs.BoolVar(&c.sqliteCover, "sqlitecover", false, "guide every target by SQLite's coverage too (slower; see sqlitecover.go)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.parallel < 1 || c.workers < 1 || c.fuzztime <= 0 || c.minimizetime < 0 {
		return c, errors.New("-parallel and -workers must be at least 1, -fuzztime positive, -minimizetime not negative")
	}
	re, err := regexp.Compile(filter)
	if err != nil {
		return c, fmt.Errorf("-run: %w", err)
	}
	c.run = re
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "fuzzrun:", err)
		}
		return 2
	}
	targets, err := listTargets(c.pkgs, c.run)
	if err != nil {
		fmt.Fprintln(stderr, "fuzzrun:", err)
		return 2
	}
	if len(targets) == 0 {
		fmt.Fprintln(stderr, "fuzzrun: no fuzz targets found")
		return 2
	}
	if c.list {
		for _, t := range targets {
			fmt.Fprintf(stdout, "%s %s\n", t.importPath, t.name)
		}
		return 0
	}
	gocache, err := goEnv("GOCACHE")
	if err != nil {
		fmt.Fprintln(stderr, "fuzzrun:", err)
		return 2
	}
	if c.self, err = os.Executable(); err != nil {
		fmt.Fprintln(stderr, "fuzzrun:", err)
		return 2
	}
	fmt.Fprintf(stdout, "fuzzrun: %d targets, %s each, %d at a time, %d worker(s) each\n",
		len(targets), c.fuzztime, c.parallel, c.workers)
	if n := countUnguided(c, targets); n > 0 {
		fmt.Fprintf(stdout, "fuzzrun: %d of them guided by the project's coverage alone, without SQLite's and the standard library's (-sqlitecover keeps them)\n", n)
	}

	results := make([]result, len(targets))
	sem := make(chan struct{}, c.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex // serialises progress lines
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = fuzzOne(c, t, gocache)
			mu.Lock()
			fmt.Fprintf(stdout, "done %s.%s: %s\n", t.short(), t.name, results[i].status())
			mu.Unlock()
		}()
	}
	wg.Wait()

	printTable(stdout, targets, results)
	failed := 0
	for i, r := range results {
		if r.err != nil || len(r.crashers) > 0 {
			failed++
			fmt.Fprintf(stdout, "\n!! %s.%s: %s\n", targets[i].short(), targets[i].name, r.status())
			for _, cr := range r.crashers {
				fmt.Fprintf(stdout, "   crasher kept as a regression seed: %s\n", cr)
			}
			fmt.Fprintf(stdout, "   last output:\n%s\n", indent(tail(r.output, 40)))
		}
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "\n%d of %d targets failed\n", failed, len(targets))
		return 1
	}
	fmt.Fprintf(stdout, "\nall %d targets passed\n", len(targets))
	return 0
}

// target is one Fuzz function: its package directory and import path.
type target struct{ dir, importPath, name string }

func (t target) short() string { return filepath.Base(t.importPath) }

// result is what one target's run gave.
type result struct {
	execs                 int64
	elapsed               time.Duration
	corpusNew, corpusSize int
	crashers              []string
	err                   error
	output                []byte
}

func (r result) status() string {
	switch {
	case len(r.crashers) > 0:
		return fmt.Sprintf("FAIL (%d crasher(s))", len(r.crashers))
	case r.err != nil:
		return "FAIL (" + r.err.Error() + ")"
	}
	return "ok"
}

// listTargets asks go for the packages and their Fuzz functions.
func listTargets(pattern string, filter *regexp.Regexp) ([]target, error) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}} {{.ImportPath}}", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pattern, err)
	}
	var targets []target
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, importPath, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		list, err := exec.Command("go", "test", importPath, "-list", "^Fuzz").Output()
		if err != nil {
			return nil, fmt.Errorf("go test -list %s: %w", importPath, err)
		}
		for _, name := range fuzzNames(list) {
			if filter.MatchString(name) {
				targets = append(targets, target{dir, importPath, name})
			}
		}
	}
	return targets, nil
}

// fuzzNames picks the Fuzz functions out of `go test -list` output.
func fuzzNames(list []byte) []string {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(list))
	for sc.Scan() {
		if name := sc.Text(); strings.HasPrefix(name, "Fuzz") && !strings.ContainsAny(name, " \t") {
			names = append(names, name)
		}
	}
	return names
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// fuzzOne runs one target with its cached corpus and collects the result.
func fuzzOne(c config, t target, gocache string) result {
	var r result
	corpus := filepath.Join(gocache, "fuzz", filepath.FromSlash(t.importPath), t.name)
	if c.cache != "" {
		if _, err := copyNew(filepath.Join(c.cache, filepath.FromSlash(t.importPath), t.name), corpus); err != nil {
			r.err = fmt.Errorf("restore corpus: %w", err)
			return r
		}
	}
	before := countFiles(corpus)
	seedDir := filepath.Join(t.dir, "testdata", "fuzz", t.name)
	seedsBefore := fileSet(seedDir)

	// go test's own -timeout (10m by default) would cut a longer fuzzing
	// run short: give it the fuzzing time plus room for the seeds and the
	// minimisation of a crasher. The context also covers the build.
	timeout := c.fuzztime + 5*time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Minute)
	defer cancel()
	args := []string{"test", t.importPath, "-run=^$", "-fuzz=^" + t.name + "$",
		"-fuzztime=" + c.fuzztime.String(), "-fuzzminimizetime=" + c.minimizetime.String(),
		"-parallel=" + strconv.Itoa(c.workers), "-timeout=" + timeout.String()}
	unguided := c.unguided(t)
	if unguided {
		args = append(args, unguidedArgs(c.self)...)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	if unguided {
		cmd.Env = append(os.Environ(), toolexecEnv+"=1")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	r.err = cmd.Run()
	r.output = out.Bytes()
	st, ok := lastStatus(r.output)
	if ok {
		r.execs, r.elapsed = st.execs, st.elapsed
	} else {
		r.elapsed = time.Since(start)
	}
	after := countFiles(corpus)
	r.corpusNew = max(after-before, 0)
	r.corpusSize = after + len(fileSet(seedDir))

	for name := range fileSet(seedDir) {
		if !seedsBefore[name] {
			path := filepath.Join(seedDir, name)
			r.crashers = append(r.crashers, path)
			if c.crashers != "" {
				dst := filepath.Join(c.crashers, filepath.FromSlash(t.importPath), t.name)
				if err := copyFile(path, filepath.Join(dst, name)); err != nil && r.err == nil {
					r.err = fmt.Errorf("copy crasher: %w", err)
				}
			}
		}
	}
	sort.Strings(r.crashers)
	// Go's fuzzer sometimes reports the end of -fuzztime itself as a
	// failure ("context deadline exceeded") while a worker is mid-input;
	// it writes no failing input then, so it is no finding.
	if r.err != nil && len(r.crashers) == 0 && onlyDeadlineFailure(r.output) {
		r.err = nil
	}
	if c.cache != "" {
		if _, err := copyNew(corpus, filepath.Join(c.cache, filepath.FromSlash(t.importPath), t.name)); err != nil && r.err == nil {
			r.err = fmt.Errorf("save corpus: %w", err)
		}
	}
	return r
}

// onlyDeadlineFailure reports whether the one thing go test says under
// its "--- FAIL:" line is the end of -fuzztime. Anything else there (a
// failing test's message, a crasher that could not be written, a worker
// that died) keeps the run failed.
func onlyDeadlineFailure(output []byte) bool {
	lines := strings.Split(string(output), "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "--- FAIL: ") {
			continue
		}
		deadline := false
		for _, l := range lines[i+1:] {
			switch {
			case l == "FAIL" || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "exit status "):
				return deadline
			case l == "    context deadline exceeded":
				deadline = true
			case strings.TrimSpace(l) != "":
				return false
			}
		}
		return deadline
	}
	return false
}

// fuzzStatus is one "fuzz: elapsed: ..., execs: ..." progress line.
type fuzzStatus struct {
	elapsed               time.Duration
	execs                 int64
	newInteresting, total int
}

var statusLine = regexp.MustCompile(`fuzz: elapsed: (\S+), execs: (\d+) \(\d+/sec\), new interesting: (\d+) \(total: (\d+)\)`)

// lastStatus reads the last progress line of a fuzzing run's output.
func lastStatus(out []byte) (fuzzStatus, bool) {
	all := statusLine.FindAllSubmatch(out, -1)
	if len(all) == 0 {
		return fuzzStatus{}, false
	}
	m := all[len(all)-1]
	elapsed, err := time.ParseDuration(string(m[1]))
	if err != nil {
		return fuzzStatus{}, false
	}
	execs, _ := strconv.ParseInt(string(m[2]), 10, 64)
	n, _ := strconv.Atoi(string(m[3]))
	total, _ := strconv.Atoi(string(m[4]))
	return fuzzStatus{elapsed, execs, n, total}, true
}

func printTable(w io.Writer, targets []target, results []result) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\ttarget\texecs\texecs/s\tcorpus new\tcorpus total\tcrashers\tresult\t")
	for i, t := range targets {
		r := results[i]
		rate := "-"
		if s := r.elapsed.Seconds(); s > 0 {
			rate = strconv.FormatInt(int64(float64(r.execs)/s), 10)
		}
		res := "ok"
		if r.err != nil || len(r.crashers) > 0 {
			res = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s\t\n", t.short(), t.name, r.execs, rate, r.corpusNew, r.corpusSize, len(r.crashers), res)
	}
	tw.Flush()
}

// fileSet lists the regular files directly in dir (none if it is missing).
func fileSet(dir string) map[string]bool {
	set := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type().IsRegular() {
			set[e.Name()] = true
		}
	}
	return set
}

func countFiles(dir string) int { return len(fileSet(dir)) }

// copyNew copies every file of src that dst lacks (corpus entries are
// named by their content's hash, so a name present is the same entry). A
// missing src copies nothing.
func copyNew(src, dst string) (int, error) {
	have := fileSet(dst)
	n := 0
	for name := range fileSet(src) {
		if have[name] {
			continue
		}
		if err := copyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

func tail(b []byte, lines int) string {
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func indent(s string) string { return "     " + strings.ReplaceAll(s, "\n", "\n     ") }
