// Command winetest runs the windows/amd64 test suite under Wine on Linux.
//
//	go run ./tools/winetest [-parallel 2] [-run REGEXP] [packages]
//
// It needs Debian's wine64 and gcc-mingw-w64-x86-64-win32 (.ci/run installs
// them). Two accommodations make Go 1.26's Windows binaries run under Wine
// 8.0 without touching the product (README "Platforms" says what Wine cannot
// show):
//
//  1. A private Wine prefix gets bcryptprimitives.dll built from
//     shim/bcryptprimitives.c: the Go runtime needs ProcessPrng,
//     which Wine 8.0 lacks.
//  2. The test binaries are built with -overlay over GOROOT's
//     internal/syscall/windows/at_windows.go, patched at run time (never
//     committed) so that Deleteat falls back to the old deletion call on any
//     status: Wine answers FileDispositionInformationEx with one Go's list of
//     fallback statuses lacks, and every os.RemoveAll (t.TempDir's cleanup)
//     would fail.
//
// The command binaries the process tests run are built once for Windows and
// named to the tests by STATEGUARD_TEST_BINDIR. Each package's test binary
// runs in its package folder, with WINEDEBUG=-all; the counts are of
// top-level tests and examples. It closes with "wine: N passed, N failed,
// N skipped" and exits non-zero when any test or test binary failed.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stateguard/stateguard/internal/storage/durable"
)

func main() {
	parallel := flag.Int("parallel", 2, "test binaries built and run at once")
	runPat := flag.String("run", "", "passed to each test binary as -test.run")
	skipPat := flag.String("skip", "", "passed to each test binary as -test.skip (the caller names why)")
	timeout := flag.Duration("timeout", 25*time.Minute, "passed to each test binary as -test.timeout (internal/cli/sweepcli took 10 min under Wine on a loaded 2-core machine)")
	work := flag.String("work", "", "folder for the overlay, binaries and logs (default: a new temporary folder, removed afterwards)")
	prefix := flag.String("prefix", "", "the private Wine prefix (default: stateguard-winetest/prefix in the user cache folder)")
	verbose := flag.Bool("v", false, "print every test binary's output")
	flag.Parse()
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	if err := run(*parallel, *runPat, *skipPat, *timeout, *work, *prefix, *verbose, pkgs); err != nil {
		fmt.Fprintln(os.Stderr, "winetest:", err)
		os.Exit(1)
	}
}

// pkg is one package of the module, as go list sees it for windows/amd64.
type pkg struct {
	ImportPath   string
	Dir          string
	TestGoFiles  []string
	XTestGoFiles []string
	TestImports  []string
	XTestImports []string
}

// depthFlags lowers the case counts of the property tests for the Wine run,
// where every file operation goes through the Wine server: their depth is
// the Linux run's job, and here they are to execute the Windows paths.
func depthFlags(p pkg) []string {
	var flags []string
	for _, imp := range append(append([]string{}, p.TestImports...), p.XTestImports...) {
		if imp == "pgregory.net/rapid" {
			flags = append(flags, "-rapid.checks=10")
			break
		}
	}
	if p.ImportPath == "github.com/stateguard/stateguard/impl/ledger" {
		flags = append(flags, "-props.n=10")
	}
	return flags
}

// result is what one package's test binary did.
type result struct {
	pkg                 string
	pass, skip, fail    int
	failed              []string // top-level tests that failed
	binaryFailed        bool     // build failure, crash, timeout or non-zero exit
	note                string   // why binaryFailed, when no test failed
	elapsed             time.Duration
	failOutput, logPath string
}

func run(parallel int, runPat, skipPat string, timeout time.Duration, work, prefix string, verbose bool, patterns []string) error {
	wine, err := lookTool("wine64", "wine")
	if err != nil {
		return err
	}
	gcc, err := lookTool("x86_64-w64-mingw32-gcc")
	if err != nil {
		return err
	}
	src, err := sourceDir()
	if err != nil {
		return err
	}
	if work == "" {
		work, err = os.MkdirTemp("", "stateguard-winetest-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	if work, err = filepath.Abs(work); err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if prefix == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		prefix = filepath.Join(cache, "stateguard-winetest", "prefix")
	}
	if prefix, err = filepath.Abs(prefix); err != nil {
		return err
	}
	wineEnv := append(os.Environ(),
		"WINEPREFIX="+prefix,
		"WINEDEBUG=-all",
		// No Mono or Gecko installer prompts while the prefix is made.
		"WINEDLLOVERRIDES=mscoree,mshtml=",
	)
	// One run at a time per prefix: the run ends by stopping the prefix's
	// Wine server, which would kill another run's test binaries.
	if err := os.MkdirAll(prefix, 0o700); err != nil {
		return err
	}
	lock, err := durable.Acquire(prefix + ".lock")
	if err != nil {
		return fmt.Errorf("locking the prefix: %w", err)
	}
	defer lock.Unlock()
	defer stopWineserver(wine, wineEnv)

	start := time.Now()
	if err := makePrefix(wine, prefix, wineEnv); err != nil {
		return err
	}
	if err := buildShim(gcc, src, prefix); err != nil {
		return err
	}
	if err := startWine(wine, wineEnv); err != nil {
		return err
	}
	overlay, err := writeOverlay(work)
	if err != nil {
		return err
	}
	goEnv := append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	binDir := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-overlay", overlay, "-o", binDir+string(filepath.Separator),
		"./cmd/sweep-state", "./cmd/task-state-guard")
	build.Env, build.Stdout, build.Stderr = goEnv, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the commands for windows: %w", err)
	}
	pkgs, err := listPackages(goEnv, patterns)
	if err != nil {
		return err
	}
	fmt.Printf("winetest: prefix %s ready in %.1fs; %d packages with tests\n", prefix, time.Since(start).Seconds(), len(pkgs))

	// As a Windows path: Wine maps drive Z: to /, and CreateProcess wants
	// a drive letter.
	runEnv := append(wineEnv, "STATEGUARD_TEST_BINDIR=Z:"+strings.ReplaceAll(binDir, "/", `\`))
	results := make([]result, len(pkgs))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	var printMu sync.Mutex
	for i, p := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := testPackage(p, work, overlay, goEnv, wine, runEnv, runPat, skipPat, timeout, verbose)
			if wineStartFailure(r) {
				r = rerunFailed(r, func(pat string) result {
					return testPackage(p, work, overlay, goEnv, wine, runEnv, pat, skipPat, timeout, verbose)
				})
			}
			results[i] = r
			printMu.Lock()
			defer printMu.Unlock()
			printResult(r)
		}()
	}
	wg.Wait()

	var pass, skip, fail int
	var bad []string
	fmt.Println("winetest: per package (pass/skip/fail)")
	for _, r := range results {
		pass, skip, fail = pass+r.pass, skip+r.skip, fail+r.fail
		fmt.Printf("  %-60s %4d %4d %4d%s\n", r.pkg, r.pass, r.skip, r.fail, map[bool]string{true: "  BINARY FAILED", false: ""}[r.binaryFailed])
		if r.binaryFailed || r.fail > 0 {
			bad = append(bad, r.pkg)
			if r.fail == 0 {
				fail++ // a binary that failed with no failing test still fails the run
			}
		}
	}
	fmt.Printf("winetest: whole run %.1fs\n", time.Since(start).Seconds())
	fmt.Printf("wine: %d passed, %d failed, %d skipped\n", pass, fail, skip)
	if len(bad) > 0 {
		return fmt.Errorf("failed under Wine: %s", strings.Join(bad, " "))
	}
	return nil
}

func lookTool(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found (Debian: apt-get install -y wine64 gcc-mingw-w64-x86-64-win32)", names[0])
}

// sourceDir is this tool's folder, where the shim's source is.
func sourceDir() (string, error) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/stateguard/stateguard/tools/winetest").Output()
	if err != nil {
		return "", fmt.Errorf("locating tools/winetest: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// makePrefix creates the private prefix once; later runs reuse it.
func makePrefix(wine, prefix string, env []string) error {
	if _, err := os.Stat(filepath.Join(prefix, "system.reg")); err == nil {
		return nil
	}
	boot := exec.Command(wine, "wineboot", "--init")
	boot.Env = env
	if out, err := boot.CombinedOutput(); err != nil {
		return fmt.Errorf("wineboot --init: %v\n%s", err, out)
	}
	// wineboot returns before the registry is written out; the server
	// writes it when it exits.
	if ws, err := exec.LookPath("wineserver"); err == nil {
		w := exec.Command(ws, "-w")
		w.Env = env
		w.Run()
	}
	if _, err := os.Stat(filepath.Join(prefix, "drive_c", "windows", "system32")); err != nil {
		return fmt.Errorf("wineboot left no system32 in %s: %w", prefix, err)
	}
	return nil
}

// startWine starts the prefix's Wine server, kept running until
// stopWineserver, and its service processes, all with /dev/null for their
// standard streams. Started by the first test binary instead, they would
// inherit its output pipe and hold it open, so that binary's output would
// never end and its slot would stay taken until the run ended.
func startWine(wine string, env []string) error {
	ws, err := exec.LookPath("wineserver")
	if err != nil {
		ws = filepath.Join(filepath.Dir(wine), "wineserver")
	}
	server := exec.Command(ws, "-p")
	server.Env = env
	if err := server.Run(); err != nil {
		return fmt.Errorf("wineserver -p: %w", err)
	}
	boot := exec.Command(wine, "wineboot")
	boot.Env = env
	if err := boot.Run(); err != nil {
		return fmt.Errorf("wineboot: %w", err)
	}
	return nil
}

func stopWineserver(wine string, env []string) {
	ws, err := exec.LookPath("wineserver")
	if err != nil {
		ws = filepath.Join(filepath.Dir(wine), "wineserver")
	}
	k := exec.Command(ws, "-k")
	k.Env = env
	k.Run()
}

// buildShim compiles bcryptprimitives.dll into the prefix's system32.
func buildShim(gcc, src, prefix string) error {
	dll := filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	cc := exec.Command(gcc, "-shared", "-O2", "-o", dll,
		filepath.Join(src, "shim", "bcryptprimitives.c"), filepath.Join(src, "shim", "bcryptprimitives.def"), "-lbcrypt")
	if out, err := cc.CombinedOutput(); err != nil {
		return fmt.Errorf("building bcryptprimitives.dll: %v\n%s", err, out)
	}
	return nil
}

// deleteatDefault is the default case of Deleteat's switch on the status of
// FileDispositionInformationEx; the patch makes it take the fallback too.
const (
	deleteatDefault = "\tdefault:\n\t\treturn err.(NTStatus).Errno()\n\t}\n}"
	deleteatPatched = "\tdefault: // patched by tools/winetest for Wine\n\t\treturn deleteatFallback(h)\n\t}\n}"
)

// writeOverlay writes the patched at_windows.go and the overlay file naming it.
func writeOverlay(work string) (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	orig := filepath.Join(strings.TrimSpace(string(out)), "src", "internal", "syscall", "windows", "at_windows.go")
	text, err := os.ReadFile(orig)
	if err != nil {
		return "", err
	}
	if n := bytes.Count(text, []byte(deleteatDefault)); n != 1 || !bytes.Contains(text, []byte("func deleteatFallback(")) {
		return "", fmt.Errorf("%s: Deleteat's default case not found as expected (%d matches): update tools/winetest for this Go release", orig, n)
	}
	patched := filepath.Join(work, "at_windows.go")
	if err := os.WriteFile(patched, bytes.Replace(text, []byte(deleteatDefault), []byte(deleteatPatched), 1), 0o644); err != nil {
		return "", err
	}
	js, err := json.Marshal(map[string]map[string]string{"Replace": {orig: patched}})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(work, "overlay.json")
	return overlay, os.WriteFile(overlay, js, 0o644)
}

func listPackages(goEnv, patterns []string) ([]pkg, error) {
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles,TestImports,XTestImports"}, patterns...)...)
	cmd.Env, cmd.Stderr = goEnv, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if len(p.TestGoFiles)+len(p.XTestGoFiles) > 0 {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}

// event is one line of test2json's output.
type event struct {
	Action string
	Test   string
	Output string
}

func testPackage(p pkg, work, overlay string, goEnv []string, wine string, runEnv []string, runPat, skipPat string, timeout time.Duration, verbose bool) result {
	start := time.Now()
	r := result{pkg: p.ImportPath}
	name := strings.ReplaceAll(strings.TrimPrefix(p.ImportPath, "github.com/stateguard/stateguard/"), "/", "_")
	exe := filepath.Join(work, "tests", name+".test.exe")
	r.logPath = filepath.Join(work, "logs", name+".log")
	os.MkdirAll(filepath.Dir(r.logPath), 0o755)
	build := exec.Command("go", "test", "-c", "-overlay", overlay, "-o", exe, p.ImportPath)
	build.Env = goEnv
	if out, err := build.CombinedOutput(); err != nil {
		r.binaryFailed, r.note, r.failOutput = true, "build failed", string(out)
		r.elapsed = time.Since(start)
		return r
	}
	args := []string{exe, "-test.v=test2json", "-test.timeout=" + timeout.String(), "-test.count=1"}
	if runPat != "" {
		args = append(args, "-test.run="+runPat)
	}
	if skipPat != "" {
		args = append(args, "-test.skip="+skipPat)
	}
	args = append(args, depthFlags(p)...)
	test := exec.Command(wine, args...)
	test.Dir, test.Env = p.Dir, runEnv
	conv := exec.Command("go", "tool", "test2json", "-p", p.ImportPath)
	pipe, err := test.StdoutPipe()
	if err != nil {
		r.binaryFailed, r.note = true, err.Error()
		return r
	}
	var stderr bytes.Buffer
	test.Stderr = &stderr
	conv.Stdin = pipe
	convOut, err := conv.StdoutPipe()
	if err != nil {
		r.binaryFailed, r.note = true, err.Error()
		return r
	}
	if err := test.Start(); err != nil {
		r.binaryFailed, r.note = true, err.Error()
		return r
	}
	if err := conv.Start(); err != nil {
		test.Process.Kill()
		test.Wait()
		r.binaryFailed, r.note = true, err.Error()
		return r
	}
	logFile, _ := os.Create(r.logPath)
	output := map[string]*strings.Builder{}    // by top-level test
	ownOutput := map[string]*strings.Builder{} // by test and subtest
	var failedAny []string                     // every test and subtest that failed
	var pkgOutput strings.Builder
	sc := bufio.NewScanner(convOut)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Action == "output" {
			if logFile != nil {
				io.WriteString(logFile, e.Output)
			}
			if verbose {
				fmt.Print(e.Output)
			}
		}
		top := e.Test
		if i := strings.IndexByte(top, '/'); i >= 0 {
			top = top[:i]
		}
		if top == "" {
			if e.Action == "output" {
				pkgOutput.WriteString(e.Output)
			}
			continue
		}
		if output[top] == nil {
			output[top] = &strings.Builder{}
		}
		if ownOutput[e.Test] == nil {
			ownOutput[e.Test] = &strings.Builder{}
		}
		if e.Action == "output" {
			output[top].WriteString(e.Output)
			ownOutput[e.Test].WriteString(e.Output)
		}
		if e.Action == "fail" {
			failedAny = append(failedAny, e.Test)
		}
		if e.Test != top {
			continue
		}
		switch e.Action {
		case "pass":
			r.pass++
		case "skip":
			r.skip++
		case "fail":
			r.fail++
			r.failed = append(r.failed, top)
		}
	}
	convErr := conv.Wait()
	testErr := test.Wait()
	if logFile != nil {
		logFile.WriteString(stderr.String())
		logFile.Close()
	}
	r.elapsed = time.Since(start)
	if testErr != nil || convErr != nil {
		r.binaryFailed = true
		r.note = fmt.Sprintf("test binary: %v", errors.Join(testErr, convErr))
	}
	var fo strings.Builder
	sort.Strings(r.failed)
	for _, t := range r.failed {
		// The subtests that failed themselves, not through a subtest of
		// theirs: a test with hundreds of subtests would otherwise bury
		// its failure under their passes.
		leaves := failedLeaves(t, failedAny)
		if len(leaves) == 0 {
			fo.WriteString(output[t].String())
		}
		for _, l := range leaves {
			fo.WriteString(ownOutput[l].String())
		}
	}
	if r.binaryFailed && r.fail == 0 {
		fo.WriteString(tail(pkgOutput.String()+stderr.String(), 60))
		// A test still running when the binary died (timeout, log.Fatal).
		for t, b := range output {
			if !strings.Contains(b.String(), "--- ") {
				fmt.Fprintf(&fo, "(%s had not finished)\n%s", t, tail(b.String(), 30))
			}
		}
	}
	r.failOutput = fo.String()
	return r
}

// failedLeaves returns the failed subtests of top (from failed, every
// test and subtest that failed) that have no failed subtest of their own.
func failedLeaves(top string, failed []string) []string {
	var leaves []string
	for _, f := range failed {
		if !strings.HasPrefix(f, top+"/") {
			continue
		}
		leaf := true
		for _, g := range failed {
			if strings.HasPrefix(g, f+"/") {
				leaf = false
				break
			}
		}
		if leaf {
			leaves = append(leaves, f)
		}
	}
	return leaves
}

// wineStartFailure reports a package whose failures include Wine failing
// to start a test's child process ("fork/exec ...: Internal error."): a
// fault of Wine's process creation under load, seen about once a run in a
// suite that starts thousands of processes, not an answer of the code.
func wineStartFailure(r result) bool {
	return r.fail > 0 && strings.Contains(r.failOutput, "fork/exec ") && strings.Contains(r.failOutput, ": Internal error.")
}

// rerunFailed runs the failed top-level tests of r once more and, when
// they all pass, counts them as passed and says so on the result line; a
// failure that repeats stays a failure, with the second run's output.
func rerunFailed(r result, again func(runPat string) result) result {
	names := make([]string, len(r.failed))
	for i, n := range r.failed {
		names[i] = regexp.QuoteMeta(n)
	}
	r2 := again("^(" + strings.Join(names, "|") + ")$")
	if r2.fail > 0 || r2.binaryFailed || r2.pass != len(names) {
		r2.note = "failed again after a rerun (Wine had failed to start a process)"
		r2.pass, r2.skip = r2.pass+r.pass, r.skip
		return r2
	}
	r.pass += r.fail
	r.fail, r.failed, r.binaryFailed = 0, nil, false
	r.note = "rerun of " + strings.Join(names, " ") + " passed after Wine failed to start a process"
	r.failOutput = ""
	return r
}

func printResult(r result) {
	word := "ok  "
	if r.binaryFailed || r.fail > 0 {
		word = "FAIL"
	}
	fmt.Printf("%s %s  pass %d skip %d fail %d  (%.1fs)\n", word, r.pkg, r.pass, r.skip, r.fail, r.elapsed.Seconds())
	if word != "FAIL" && r.note != "" {
		fmt.Println("  " + r.note)
	}
	if word == "FAIL" {
		if r.note != "" {
			fmt.Println("  " + r.note)
		}
		fmt.Print(indent(tail(r.failOutput, 200)))
		fmt.Printf("  (full log: %s)\n", r.logPath)
	}
}

func tail(s string, lines int) string {
	ls := strings.SplitAfter(s, "\n")
	if len(ls) > lines {
		ls = append([]string{fmt.Sprintf("... %d lines before\n", len(ls)-lines)}, ls[len(ls)-lines:]...)
	}
	return strings.Join(ls, "")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	s = "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ")
	return s + "\n"
}
