package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// The test binary stands in for a command under comparison when it is
// started as `TESTBINARY equivalence-fake KIND REAL ARGS...`: it answers as
// the kind says, running the real binary REAL for the rest. The kinds:
var fakes = map[string]func(real string, args []string) int{
	// A sweep-state whose validate never downgrades anything (it answers
	// as if the file were in order and writes nothing).
	"planted-sweep": plantedSweep,
	// A task-state-guard whose reconcile ignores the delivery grace (it
	// settles every pending delivery of a finished task at once).
	"planted-ledger": plantedLedger,
	// Commands that answer as the reference tools do where a declared
	// divergence says they differ, and as the real binary elsewhere.
	"reference-sweep":  referenceSweep,
	"reference-ledger": referenceLedger,
	// Commands that change one byte of what they print: the sweep
	// engine's read and the ledger's doctor, everything else as it is.
	// A sweep-state whose upsert-item leaves a comment at the end of the
	// file: its answers are right, only the file differs.
	"planted-file-sweep": plantedFileSweep,
	"flip-byte-sweep":    func(real string, args []string) int { return flipByte(real, args, "read") },
	"flip-byte-ledger":   func(real string, args []string) int { return flipByte(real, args, "doctor") },
}

// builtDir holds the binaries the tests share, built once.
var builtDir string

func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == "equivalence-fake" {
		os.Exit(fakes[os.Args[2]](os.Args[3], os.Args[4:]))
	}
	dir, err := os.MkdirTemp("", "equivalence-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	builtDir = dir
	status := m.Run()
	os.RemoveAll(dir)
	os.Exit(status)
}

var (
	buildOnce sync.Map // name -> *builtBinary
)

type builtBinary struct {
	once sync.Once
	path string
	err  error
}

// binary returns the command binary of cmd/name, built once for all tests.
func binary(t *testing.T, name string) string {
	t.Helper()
	platformtest.GoCommand(t)
	v, _ := buildOnce.LoadOrStore(name, &builtBinary{})
	b := v.(*builtBinary)
	b.once.Do(func() { b.path, b.err = platformtest.CommandBinary(builtDir, name) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// fake is the command line of a stand-in of the given kind around real.
func fake(t *testing.T, kind, real string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{self, "equivalence-fake", kind, real}, " ")
}

// pass runs the real binary with args and the same streams.
func pass(real string, args []string) int {
	cmd := exec.Command(real, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		return 125
	}
	return 0
}

// flipByte runs the real binary and, for the named subcommand, prints
// its stdout with the byte before the last changed.
func flipByte(real string, args []string, sub string) int {
	if subcommand(args) != sub {
		return pass(real, args)
	}
	var out bytes.Buffer
	cmd := exec.Command(real, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, &out, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			return 125
		}
		code = exit.ExitCode()
	}
	b := out.Bytes()
	if len(b) > 1 {
		b[len(b)-2] ^= 1
	}
	os.Stdout.Write(b)
	return code
}

func plantedFileSweep(real string, args []string) int {
	code := pass(real, args)
	if len(args) > 2 && args[0] == "upsert-item" && args[1] == "--state" {
		f, err := os.OpenFile(args[2], os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return 125
		}
		defer f.Close()
		f.WriteString("# planted\n")
	}
	return code
}

func plantedSweep(real string, args []string) int {
	if len(args) > 0 && args[0] == "validate" {
		fmt.Print("OK\n{\"downgraded\": []}\n")
		return 0
	}
	return pass(real, args)
}

func plantedLedger(real string, args []string) int {
	if subcommand(args) != "reconcile" {
		return pass(real, args)
	}
	var kept []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--delivery-grace-seconds" {
			i++
			continue
		}
		kept = append(kept, args[i])
	}
	return pass(real, append(kept, "--delivery-grace-seconds", "0"))
}

// referenceSweep answers D5, D7 and D14's inputs as the Python engine
// does, by accepting them (what it then writes is left to the real binary
// with a harmless value: only the new side's answer decides a divergence).
func referenceSweep(real string, args []string) int {
	args = append([]string{}, args...)
	for i, a := range args {
		switch {
		case a == "-1" && i > 0 && args[i-1] == "--ttl-minutes":
			args[i] = "0"
		case a == "soon":
			args[i] = "2026-07-02T12:00:00Z"
		case i > 0 && args[i-1] == "--json" && (strings.Contains(a, "NaN") || strings.Contains(a, "Infinity") || strings.Contains(a, "e999")):
			args[i] = `{"n": 0}`
		}
	}
	return pass(real, args)
}

// referenceLedger answers as the Python ledger does where L1, L2, L3, L7
// and L8 say it differs: every command but a dry run makes a missing
// ledger first, ids and numbers are read as Python's int(s, 16) and
// float(s) read them, and a start whose deadline overflows is
// InvalidInput.
func referenceLedger(real string, args []string) int {
	db := flagValue(args, "--db")
	sub := subcommand(args)
	if _, err := os.Stat(db); os.IsNotExist(err) && db != "" && sub != "" && !hasWord(args, "--dry-run") {
		init := exec.Command(real, platformtest.ACLArgs("--db", db, "init")...)
		if err := init.Run(); err != nil {
			return 125
		}
	}
	args = append([]string{}, args...)
	for i, a := range args {
		switch {
		case len(a) == 32 && strings.HasPrefix(a, "0x"):
			args[i] = "00" + a[2:]
		case len(a) == 32 && (a[0] == '+' || a[0] == ' '):
			args[i] = "0" + a[1:]
		case i > 0 && strings.HasSuffix(args[i-1], "-seconds"):
			args[i] = strings.Map(func(r rune) rune {
				switch {
				case r == '_':
					return -1
				case r >= '\u0660' && r <= '\u0669':
					return '0' + (r - '\u0660')
				}
				return r
			}, a)
		}
	}
	if sub == "start" {
		now, _ := strconv.ParseFloat(os.Getenv(testNowEnv), 64)
		if now > 1e300 {
			var out bytes.Buffer
			cmd := exec.Command(real, args...)
			cmd.Stdout = &out
			if err := cmd.Run(); err != nil && out.String() == `{"error":"StateConflict","ok":false}`+"\n" {
				fmt.Print(`{"error":"InvalidInput","ok":false}` + "\n")
				return 2
			}
			fmt.Print(out.String())
			return 0
		}
	}
	return pass(real, args)
}

// report runs the tool and returns its exit status and stdout.
func report(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errs bytes.Buffer
	status := run(args, &out, &errs)
	if errs.Len() > 0 {
		t.Logf("stderr: %s", errs.String())
	}
	return status, out.String()
}

// checkReproductions requires every reproduction in text to end in a call
// of the given subcommand.
func checkReproductions(t *testing.T, text, last string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	seen := 0
	for i, line := range lines {
		if !strings.Contains(line, " sequence ") {
			continue
		}
		seen++
		j := i + 1
		for j+1 < len(lines) && strings.HasPrefix(lines[j+1], "  ") {
			j++
		}
		if !strings.Contains(lines[j], "PROGRAM "+last+" ") && !strings.Contains(lines[j], "tasks.sqlite "+last) {
			t.Errorf("a reproduction does not end in %s:\n%s", last, strings.Join(lines[i:j+1], "\n"))
		}
	}
	if seen == 0 {
		t.Errorf("no reproduction in the report:\n%s", text)
	}
}

// The binary against itself: every sequence equivalent, exit 0.
func TestSweepAgainstItself(t *testing.T) {
	t.Parallel()
	bin := binary(t, "sweep-state")
	status, out := report(t, "-sweep-old", bin, "-sweep-new", bin, "-sequences", "4", "-steps", "8", "-seed", "3")
	want := "sweep: sequences ended by a declared divergence (spec/sweep-state.md section 17): D5 0, D7 0, D14 0\n" +
		"4/4 sequences equivalent; 0 differences outside the declared divergences\n"
	if status != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, want 0 and %q", status, out, want)
	}
}

// A validate that never downgrades is found and reported with a shortened
// reproduction ending in validate.
func TestSweepFindsAPlantedBug(t *testing.T) {
	t.Parallel()
	bin := binary(t, "sweep-state")
	status, out := report(t, "-sweep-old", bin, "-sweep-new", fake(t, "planted-sweep", bin), "-sequences", "3", "-steps", "8", "-seed", "3")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if status != 1 || strings.Contains(last, " 0 differences") || !strings.HasSuffix(last, "differences outside the declared divergences") {
		t.Fatalf("exit %d, report:\n%s", status, out)
	}
	checkReproductions(t, out, "validate")
	t.Log(out)
}

// fixed replaces an engine's generator with the given sequences, in order.
func fixed(e engine, seqs [][]step) engine {
	n := 0
	e.generate = func(*rand.Rand, int) []step {
		seq := seqs[n%len(seqs)]
		n++
		return seq
	}
	return e
}

// declaredRun checks the sequences old against new and returns the
// report, requiring no difference outside the declared divergences and
// each named divergence counted.
func declaredRun(t *testing.T, e engine, old, new string, seqs [][]step, names ...string) {
	t.Helper()
	var out bytes.Buffer
	c := config{fixed(e, seqs), command(old), command(new), len(seqs), 0, 1, 2}
	r, err := check(c, &out)
	if err != nil {
		t.Fatal(err)
	}
	if r.differences != 0 {
		t.Errorf("%d differences outside the declared divergences:\n%s", r.differences, out.String())
	}
	for _, name := range names {
		if r.declared[name] == 0 {
			t.Errorf("%s ended no sequence; report: %s", name, r.declaredLine(e))
		}
	}
	t.Log(r.declaredLine(e))
}

// The reference's answers to D5, D7 and D14's inputs are applied by name:
// no difference outside them, and the report counts each.
func TestSweepDeclaredDivergencesByName(t *testing.T) {
	t.Parallel()
	bin := binary(t, "sweep-state")
	acquire := step{args: []string{"lease-acquire", "--state", "state.yml", "--writer", "w1", "--now", "2026-07-02T12:00:00Z"}}
	seqs := [][]step{
		{acquire, {args: []string{"upsert-item", "--state", "state.yml", "--source", "mail", "--id", "a1", "--json", `{"n": NaN}`, "--writer", "w1", "--now", "2026-07-02T12:01:00Z"}}},
		{acquire, {args: []string{"lease-acquire", "--state", "state.yml", "--writer", "w1", "--ttl-minutes", "-1", "--now", "2026-07-02T12:01:00Z"}}},
		{acquire, {args: []string{"cursor-advance", "--state", "state.yml", "--source", "mail", "--to", "7", "--past-item", "a1", "--writer", "w1", "--now", "soon"}}},
		{acquire, {args: []string{"read", "--state", "state.yml"}}},
	}
	declaredRun(t, sweepEngine(), fake(t, "reference-sweep", bin), bin, seqs, "D5", "D7", "D14")
}

// The ledger against itself: every sequence equivalent, exit 0.
func TestLedgerAgainstItself(t *testing.T) {
	t.Parallel()
	bin := binary(t, "task-state-guard")
	status, out := report(t, "-ledger-old", bin, "-ledger-new", bin, "-sequences", "4", "-steps", "8", "-seed", "3")
	want := "ledger: sequences ended by a declared divergence (spec/task-state-guard.md section 17): L1 0, L2 0, L3 0, L7 0, L8 0\n" +
		"4/4 sequences equivalent; 0 differences outside the declared divergences\n"
	if status != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, want 0 and %q", status, out, want)
	}
}

// A reconcile that ignores the delivery grace is found and reported with
// a shortened reproduction ending in reconcile.
func TestLedgerFindsAPlantedBug(t *testing.T) {
	t.Parallel()
	bin := binary(t, "task-state-guard")
	status, out := report(t, "-ledger-old", bin, "-ledger-new", fake(t, "planted-ledger", bin), "-sequences", "4", "-steps", "10", "-seed", "3")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if status != 1 || strings.Contains(last, " 0 differences") {
		t.Fatalf("exit %d, report:\n%s", status, out)
	}
	checkReproductions(t, out, "reconcile")
	t.Log(out)
}

// The reference's answers where L1, L2, L3, L7 and L8 say it differs are
// applied by name: no difference outside them, and the report counts each.
func TestLedgerDeclaredDivergencesByName(t *testing.T) {
	t.Parallel()
	bin := binary(t, "task-state-guard")
	at := func(now string, args ...string) step { return step{ledgerCall(args...), now} }
	const base, id = "978307200", "7a5c0001-0000-4000-8000-000000000001"
	seqs := [][]step{
		{at(base, "start", id)},
		{at(base, "doctor")},
		{at(base, "init"), at(base, "start", "0x5c0001000040008000000000000001")},
		{at(base, "reconcile")},
		{at("1.7e308", "create", "--task-id", id, "--timeout-seconds", "1e308"), at("1.7e308", "start", id)},
		{at(base, "create", "--task-id", id), at("978307260", "reconcile", "--dry-run", "--active-grace-seconds", "9_00")},
		{at(base, "init"), at(base, "create", "--task-id", id), at("978307300.5", "start", id)},
	}
	declaredRun(t, ledgerEngine(), fake(t, "reference-ledger", bin), bin, seqs, "L1", "L2", "L3", "L7", "L8")
}

// The generators make the inputs of every declared divergence the tool
// applies, so a run of the default size meets them.
func TestGeneratorsReachTheDeclaredDivergences(t *testing.T) {
	t.Parallel()
	reaches := map[string]func(seq []step) bool{
		"D5": func(seq []step) bool {
			return anyStep(seq, func(a []string) bool { return strings.Contains(flagValue(a, "--json"), "NaN") })
		},
		"D7": func(seq []step) bool {
			return anyStep(seq, func(a []string) bool { return flagValue(a, "--ttl-minutes") == "-1" })
		},
		"D14": func(seq []step) bool {
			return anyStep(seq, func(a []string) bool { return flagValue(a, "--now") == "soon" })
		},
		"L1": func(seq []step) bool { return subcommand(seq[0].args) == "start" },
		"L2": func(seq []step) bool { return subcommand(seq[0].args) == "doctor" },
		"L3": func(seq []step) bool { return anyStep(seq, hasOddSpelling) },
		"L7": func(seq []step) bool {
			return subcommand(seq[0].args) == "reconcile" && !hasWord(seq[0].args, "--dry-run")
		},
		"L8": func(seq []step) bool {
			return anyStep(seq, func(a []string) bool { return flagValue(a, "--timeout-seconds") == "1e308" })
		},
	}
	met := map[string]int{}
	for _, e := range []engine{sweepEngine(), ledgerEngine()} {
		r := rand.New(rand.NewSource(1))
		for n := 0; n < 200; n++ {
			seq := e.generate(r, 12)
			for _, d := range e.divergences {
				if reaches[d.name](seq) {
					met[d.name]++
				}
			}
		}
		for _, d := range e.divergences {
			if met[d.name] == 0 {
				t.Errorf("no %s sequence of 200 reaches %s", e.name, d.name)
			}
		}
	}
	t.Log(met)
}

// The generators draw from the models: over the sequences of a default
// run, the models' answers include every status word the sweep engine
// gives to a valid call (a lease contested while live and once stale, a
// cursor moved back, a write without the lease), a validate that
// downgrades, every refusal class of the ledger, and each decision of
// reconcile, a delivery still inside its grace among them.
func TestGeneratorsMeetTheModelsDecisions(t *testing.T) {
	t.Parallel()
	// The least number of sequences of 200 that meet each: a few for
	// most; for the decisions the clock must be moved onto a boundary to
	// meet often (a lease taken at the end of its TTL, a delivery's grace
	// running out), about half what the models' boundaries give with this
	// seed, well above what a clock moving at random gives.
	for _, side := range []struct {
		draw func(*rand.Rand, int) ([]step, map[string]int)
		want map[string]int
	}{
		{drawSweep, map[string]int{"OK": 5, "NO-STATE": 5, "LOCKED": 5, "STALE-RECLAIMED": 5, "LEASE-LOST": 5,
			"at the TTL's end: LOCKED": 5, "at the TTL's end: STALE-RECLAIMED": 5, "REFUSED": 5, "ERROR": 5, "downgraded": 5}},
		{drawLedger, map[string]int{"ok": 5, "StateConflict": 5, "InvalidInput": 5, "TaskNotFound": 5, "timed out": 5, "active retained": 5,
			"delivery failed": 35, "delivery not applicable": 22, "delivery retained": 5}},
	} {
		met := map[string]int{}
		r := rand.New(rand.NewSource(1))
		for n := 0; n < 200; n++ {
			_, m := side.draw(r, 12)
			for k := range m {
				met[k]++
			}
		}
		for w, least := range side.want {
			if met[w] < least {
				t.Errorf("%q met in %d sequences of 200, want %d at least", w, met[w], least)
			}
		}
		t.Log(met)
	}
}

func anyStep(seq []step, f func([]string) bool) bool {
	for _, s := range seq {
		if f(s.args) {
			return true
		}
	}
	return false
}

// fakePythonLedger is a stand-in for the pip-installed Python ledger: a
// program that reads the time as the reference does, through time.time,
// and hands it to the real binary as its test clock.
const fakePythonLedger = `import os, subprocess, sys, time
env = dict(os.environ, TASK_STATE_GUARD_TEST_CLOCK="1", TASK_STATE_GUARD_TEST_NOW=repr(time.time()))
sys.exit(subprocess.call([%s, *sys.argv[1:]], env=env))
`

// python returns the machine's Python 3, or skips (fails under CI=true).
func python(t *testing.T) string {
	t.Helper()
	name := "python3"
	if platformtest.Windows {
		name = "python"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no %s: %v", name, err)
		}
		t.Skipf("no %s: %v", name, err)
	}
	return p
}

// writeFakePythonLedger writes the stand-in as a script and as the
// package task_state_guard under dir, and returns the script's path.
func writeFakePythonLedger(t *testing.T, dir, real string) string {
	t.Helper()
	quoted, err := json.Marshal(real)
	if err != nil {
		t.Fatal(err)
	}
	text := []byte(fmt.Sprintf(fakePythonLedger, quoted))
	if err := os.MkdirAll(filepath.Join(dir, "task_state_guard"), 0o700); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "task-state-guard")
	for _, p := range []string{script, filepath.Join(dir, "task_state_guard", "__main__.py")} {
		if err := os.WriteFile(p, text, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return script
}

// The Python forms of the old ledger, 'python3 -m task_state_guard' and
// 'python3 SCRIPT', run through the clock launcher: with -ledger-old-python
// the clocks agree; without it the wall clock shows in every time.
func TestLedgerThroughThePythonClockLauncher(t *testing.T) {
	bin := binary(t, "task-state-guard")
	py := python(t)
	modules := t.TempDir()
	script := writeFakePythonLedger(t, modules, bin)
	t.Setenv("PYTHONPATH", modules)
	for _, old := range []string{py + " -m task_state_guard", py + " " + script} {
		status, out := report(t, "-ledger-old", old, "-ledger-old-python", "-ledger-new", bin, "-sequences", "2", "-steps", "5", "-seed", "11")
		if status != 0 || !strings.HasSuffix(out, "2/2 sequences equivalent; 0 differences outside the declared divergences\n") {
			t.Fatalf("%s through the launcher: exit %d, report:\n%s", old, status, out)
		}
	}
	status, out := report(t, "-ledger-old", py+" -m task_state_guard", "-ledger-new", bin, "-sequences", "1", "-steps", "2", "-seed", "11")
	if status != 1 {
		t.Fatalf("without the launcher the wall clock went unnoticed: exit %d, report:\n%s", status, out)
	}
}

// Every divergence the tool applies is a row of its spec's section 17
// table, and the section it names exists there.
func TestDeclaredDivergencesAreInTheSpec(t *testing.T) {
	t.Parallel()
	for _, table := range [][]divergence{sweepDivergences, ledgerDivergences, recordingDivergences["sweep"], recordingDivergences["ledger"]} {
		for _, d := range table {
			text, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(d.spec)))
			if err != nil {
				t.Fatal(err)
			}
			divergences := string(text)
			start := strings.Index(divergences, "\n## 17. ")
			if start < 0 {
				t.Fatalf("%s has no section 17", d.spec)
			}
			divergences = divergences[start:]
			if end := strings.Index(divergences[1:], "\n## "); end >= 0 {
				divergences = divergences[:end+1]
			}
			if !strings.Contains(divergences, "\n| "+d.name+" | ") {
				t.Errorf("%s is not a row of %s section 17", d.name, d.spec)
			}
			if !regexp.MustCompile(`(?m)^#+ ` + regexp.QuoteMeta(d.section) + `\.? `).Match(text) {
				t.Errorf("%s names section %s, which %s does not have", d.name, d.section, d.spec)
			}
		}
	}
}

// shellSplit splits a documented command line into words as a POSIX shell
// would for the quoting the pages use ('...', "...", backslash-newline).
func shellSplit(line string) []string {
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			word.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// Every `go run ./tools/equivalence` line the README and the runbook show
// gives flags the tool accepts.
func TestDocumentedCommandLinesParse(t *testing.T) {
	t.Parallel()
	lines := 0
	for _, page := range []string{"README.md", "docs/switching.md"} {
		text, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.ReplaceAll(string(text), "\\\n", " ")
		for _, line := range strings.Split(joined, "\n") {
			_, rest, found := strings.Cut(line, "go run ./tools/equivalence ")
			if !found || !strings.HasPrefix(rest, "-") {
				continue
			}
			lines++
			rest, _, _ = strings.Cut(rest, "`")
			var errs bytes.Buffer
			if _, ok := parseOptions(shellSplit(rest), &errs); !ok {
				t.Errorf("%s: %q does not parse: %s", page, rest, errs.String())
			}
		}
	}
	if lines < 2 {
		t.Errorf("found %d documented command lines of the tool, want one in each page at least", lines)
	}
}

// Only ids and numbers in the reference's loose spellings count as L3's
// inputs; reason codes and the ledger's own spellings do not.
func TestOddSpellings(t *testing.T) {
	t.Parallel()
	for word, odd := range map[string]bool{
		"0x5c0001000040008000000000000001":     true,
		"+a5c0001000040008000000000000001":     true,
		" 7a5c000100004000800000000000001":     true,
		"9_00":                                 true,
		"\u0666\u0660\u0660":                   true,
		"7a5c0001-0000-4000-8000-000000000001": false,
		"deadline_exceeded":                    false,
		"delivery_grace_expired":               false,
		"1e308":                                false,
		"0.5":                                  false,
		"-1":                                   false,
		"--delivery-grace-seconds":             false,
	} {
		if got := hasOddSpelling([]string{word}); got != odd {
			t.Errorf("hasOddSpelling(%q) = %v, want %v", word, got, odd)
		}
	}
}

// someRecordings copies a few of the recordings into a folder of the
// fixtures' layout: a read of escaped strings, D14's and a python-written
// file's (D8) on the sweep side; the healthy ledger's four runs and a
// damaged schema's doctor (L5) on the ledger side.
func someRecordings(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{
		"sweep/edge/item-string-escapes.json",
		"sweep/edge/lease-unparseable-timestamp-never-stale.json",
		"sweep/python-written/python-written-bool-word-keys.json",
		"ledger/small-v2.expected.json", "ledger/small-v2.sqlite",
		"ledger/broken-fingerprint.expected.json", "ledger/broken-fingerprint.sqlite",
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "spec", "testdata", "fixtures", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The new binaries replay the recordings as the Python tools answered,
// the differences the declared divergences D14, D8 and L5 explain
// applied by name, with no old command given.
func TestRecordingsReplayAsRecorded(t *testing.T) {
	t.Parallel()
	sweep, ledger := binary(t, "sweep-state"), binary(t, "task-state-guard")
	status, out := report(t, "-sweep-new", sweep, "-ledger-new", ledger, "-fixtures", someRecordings(t))
	want := "sweep: 3/3 recordings of the Python tool replayed as recorded; ended by a declared divergence: D5 0, D7 0, D14 1, D8 1\n" +
		"ledger: 5/5 recordings of the Python tool replayed as recorded; ended by a declared divergence: L5 1\n" +
		"8/8 sequences equivalent; 0 differences outside the declared divergences\n"
	if status != 0 || out != want {
		t.Fatalf("exit %d, stdout\n%s\nwant 0 and\n%s", status, out, want)
	}
}

// One byte changed in what read or doctor prints is a difference from the
// recordings, reported with the call and the recording's answer.
func TestRecordingsFindAChangedByte(t *testing.T) {
	t.Parallel()
	sweep, ledger := binary(t, "sweep-state"), binary(t, "task-state-guard")
	status, out := report(t, "-sweep-new", fake(t, "flip-byte-sweep", sweep), "-ledger-new", fake(t, "flip-byte-ledger", ledger),
		"-fixtures", someRecordings(t))
	for _, want := range []string{
		"sweep recording sweep/edge/item-string-escapes.json differs from the recording at its call 3: stdout ",
		"\n  PROGRAM read --state state.yml\n",
		"sweep recording sweep/python-written/python-written-bool-word-keys.json differs from the recording at its call 2: stdout ",
		"ledger recording ledger/small-v2.sqlite run 1 (doctor) differs from the recording at its call 1: stdout ",
		"\n  TASK_STATE_GUARD_TEST_CLOCK=1 TASK_STATE_GUARD_TEST_NOW=1700000000 PROGRAM --db tasks.sqlite doctor\n",
		"sweep: 1/3 recordings of the Python tool replayed as recorded; ended by a declared divergence: D5 0, D7 0, D14 1, D8 0\n",
		"ledger: 3/5 recordings of the Python tool replayed as recorded; ended by a declared divergence: L5 0\n",
		"4/8 sequences equivalent; 4 differences outside the declared divergences\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if status != 1 {
		t.Errorf("exit %d, want 1", status)
	}
	t.Log(out)
}

// A file that differs while every answer is the same is a difference at
// the call that wrote it: the file is read again after each call that
// changed it.
func TestFindsAFileDifferenceAlone(t *testing.T) {
	t.Parallel()
	bin := binary(t, "sweep-state")
	at := "2026-07-02T12:00:00Z"
	seqs := [][]step{{
		{args: []string{"lease-acquire", "--state", "state.yml", "--writer", "w1", "--now", at}},
		{args: []string{"upsert-item", "--state", "state.yml", "--source", "mail", "--id", "a1", "--json", `{"n": 1}`, "--writer", "w1", "--now", at}},
		{args: []string{"read", "--state", "state.yml"}},
	}}
	var out bytes.Buffer
	c := config{fixed(sweepEngine(), seqs), command(bin), command(fake(t, "planted-file-sweep", bin)), 1, 0, 1, 1}
	r, err := check(c, &out)
	if err != nil {
		t.Fatal(err)
	}
	if r.differences != 1 || !strings.HasSuffix(out.String(), " upsert-item --state state.yml --source mail --id a1 --json '{\"n\": 1}' --writer w1 --now 2026-07-02T12:00:00Z\n") {
		t.Fatalf("%d differences, report:\n%s", r.differences, out.String())
	}
}
