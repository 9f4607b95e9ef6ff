package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// hostTarget is the target of the machine running the test, skipping
// where no release target matches it.
func hostTarget(t *testing.T) target {
	t.Helper()
	tg := target{runtime.GOOS, runtime.GOARCH}
	if _, ok := platformTags[tg]; !ok {
		t.Skipf("%s is not a release target", tg)
	}
	return tg
}

const testVersion = "9.8.7"

var (
	hostRelease     sync.Once
	hostReleaseDir  string
	hostReleaseErr  error
	hostReleaseRoot string
)

// releasedForHost runs the release for the host target with wheels once
// per test binary (the builds are the slow part) and returns its directory.
func releasedForHost(t *testing.T) string {
	t.Helper()
	platformtest.GoCommand(t)
	if testing.Short() || raceEnabled {
		t.Skip("builds the release (not under -short or -race)")
	}
	tg := hostTarget(t)
	hostRelease.Do(func() {
		hostReleaseRoot, hostReleaseErr = os.MkdirTemp("", "release-test-")
		if hostReleaseErr != nil {
			return
		}
		hostReleaseDir = filepath.Join(hostReleaseRoot, "dist")
		var log bytes.Buffer
		hostReleaseErr = release(options{version: testVersion, out: hostReleaseDir, targets: []target{tg}, wheels: true}, &log)
	})
	if hostReleaseErr != nil {
		t.Fatal(hostReleaseErr)
	}
	return hostReleaseDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if hostReleaseRoot != "" {
		os.RemoveAll(hostReleaseRoot)
	}
	os.Exit(code)
}

// Two runs for the same version and target give the same bytes: binaries,
// archive, wheel and SHA256SUMS.
func TestReleaseIsReproducible(t *testing.T) {
	first := releasedForHost(t)
	// The second run is another process, started by its command line, so
	// that nothing the first computed (a time, say) is shared.
	second := t.TempDir()
	run := exec.Command("go", "run", ".", "-version", testVersion, "-out", second,
		"-targets", hostTarget(t).String(), "-wheels")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("go run ./tools/release: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(first)
	if err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadDir(second)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(again) || len(entries) != 5 {
		t.Fatalf("first run wrote %d files, second %d, want 5 each", len(entries), len(again))
	}
	for _, e := range entries {
		a, err := os.ReadFile(filepath.Join(first, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(second, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs", e.Name())
		}
	}
}

func TestParseTargets(t *testing.T) {
	got, err := parseTargets("darwin/arm64, linux/amd64,darwin/arm64")
	if err != nil {
		t.Fatal(err)
	}
	if want := "linux/amd64, darwin/arm64"; targetNames(got) != want {
		t.Errorf("parseTargets = %s, want %s", targetNames(got), want)
	}
	if all, _ := parseTargets(""); len(all) != len(allTargets) {
		t.Errorf("empty -targets gave %d targets, want all %d", len(all), len(allTargets))
	}
	for _, bad := range []string{"linux", "linux/386", "plan9/amd64", "linux/amd64,"} {
		if _, err := parseTargets(bad); err == nil {
			t.Errorf("parseTargets(%q) accepted", bad)
		}
	}
}

func TestWheelsNeedAPlainVersion(t *testing.T) {
	var log bytes.Buffer
	err := release(options{version: "1.2.3-rc.1", out: t.TempDir(), wheels: true}, &log)
	if err == nil || !strings.Contains(err.Error(), "plain X.Y.Z") {
		t.Fatalf("release of a pre-release with -wheels = %v, want a refusal", err)
	}
}

// fakeWheel writes a wheel for tg around two small stand-in binaries, so
// the checks can be tested without a build.
func fakeWheel(t *testing.T, tg target) string {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{}
	for _, cli := range clis {
		bins[cli] = filepath.Join(dir, cli)
		if err := os.WriteFile(bins[cli], append(fakeExecutable(tg), "binary of "+cli...), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Its own licence files: under Wine there is no go command to find the
	// module root with.
	for _, doc := range []string{"LICENSE", "NOTICE"} {
		if err := os.WriteFile(filepath.Join(dir, doc), []byte(doc+" text\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	name, err := writeWheel(tg, "1.2.3", dir, dir, bins)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// rewriteWheel copies a wheel member by member through change, which may
// alter a member's name or content (returning keep=false drops it), and
// appends extra members at the end.
func rewriteWheel(t *testing.T, src string, change func(name string, data []byte) (string, []byte, bool), extra ...member) string {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var members []member
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		name, data, keep := change(f.Name, buf.Bytes())
		if keep {
			members = append(members, member{name: name, data: data, mode: f.Mode()})
		}
	}
	members = append(members, extra...)
	out := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := writeZip(out, members); err != nil {
		t.Fatal(err)
	}
	return out
}

// verifyWheel accepts what writeWheel writes and refuses each way a wheel
// can be wrong: a foreign or unsafe member, a missing one, a RECORD that
// does not match, metadata of another target.
func TestVerifyWheelRefuses(t *testing.T) {
	tg := target{"linux", "amd64"}
	good := fakeWheel(t, tg)
	if err := verifyWheel(good, tg, "1.2.3"); err != nil {
		t.Fatalf("the written wheel fails: %v", err)
	}
	same := func(name string, data []byte) (string, []byte, bool) { return name, data, true }
	record := distInfo("1.2.3") + "RECORD"
	cases := map[string]string{
		"unsafe path":    rewriteWheel(t, good, same, member{name: "../escape.py", data: []byte("x"), mode: 0o644}),
		"extra member":   rewriteWheel(t, good, same, member{name: "task_state_guard/extra.py", data: []byte("x"), mode: 0o644}),
		"symlink member": rewriteWheel(t, good, same, member{name: "task_state_guard/link", data: []byte("x"), mode: os.ModeSymlink | 0o777}),
		"missing member": rewriteWheel(t, good, func(n string, d []byte) (string, []byte, bool) {
			return n, d, n != pythonPackage+"/__main__.py"
		}),
		"changed binary": rewriteWheel(t, good, func(n string, d []byte) (string, []byte, bool) {
			if strings.HasSuffix(n, "scripts/sweep-state") {
				d = append(d, '!')
			}
			return n, d, true
		}),
		"RECORD lacks a line": rewriteWheel(t, good, func(n string, d []byte) (string, []byte, bool) {
			if n == record {
				lines := strings.SplitAfter(string(d), "\n")
				d = []byte(strings.Join(append(lines[:1], lines[2:]...), ""))
			}
			return n, d, true
		}),
		"RECORD hashes itself": rewriteWheel(t, good, func(n string, d []byte) (string, []byte, bool) {
			if n == record {
				d = bytes.Replace(d, []byte(record+",,"), []byte(record+","+recordHash(nil)+",0"), 1)
			}
			return n, d, true
		}),
	}
	for what, file := range cases {
		err := verifyWheel(file, tg, "1.2.3")
		if err == nil {
			t.Errorf("%s: accepted", what)
			continue
		}
		t.Logf("%s: %v", what, err)
	}
	if err := verifyWheel(good, target{"darwin", "arm64"}, "1.2.3"); err == nil {
		t.Errorf("a linux wheel passes as darwin's")
	}
	// A wheel whose RECORD is right but whose binaries are another
	// target's: writeWheel checks what it wrote and refuses it.
	dir := filepath.Dir(good)
	other := target{"darwin", "arm64"}
	bins := map[string]string{}
	for _, cli := range clis {
		bins[cli] = filepath.Join(dir, "other-"+cli)
		if err := os.WriteFile(bins[cli], fakeExecutable(other), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writeWheel(tg, "1.2.3", t.TempDir(), dir, bins); err == nil || !strings.Contains(err.Error(), "an executable for darwin/arm64, want linux/amd64") {
		t.Errorf("a linux wheel holding darwin binaries: %v", err)
	} else {
		t.Logf("another target's binaries: %v", err)
	}
}

// requirePython finds a python3 able to make a virtual environment with
// pip in it; it skips where there is none, except under CI=true, where the
// wheel must be proven to install.
func requirePython(t *testing.T) string {
	t.Helper()
	python := "python3"
	if platformtest.Windows {
		python = "python"
	}
	p, err := exec.LookPath(python)
	if err == nil {
		err = exec.Command(p, "-c", "import venv, ensurepip").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no %s with venv and ensurepip (%v): the wheel cannot be installed", python, err)
		}
		t.Skipf("no %s with venv and ensurepip: %v", python, err)
	}
	return p
}

// offlinePip is the environment of every pip call: no configuration file
// (which could name an index or local wheels), no index, no version check.
func offlinePip() []string {
	return append(os.Environ(), "PIP_CONFIG_FILE="+os.DevNull, "PIP_NO_INDEX=1",
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_CACHE_DIR=1", "PYTHONDONTWRITEBYTECODE=1")
}

// suiteStep is one call of the smoke suite: the command (an installed
// command's name, or "module" for python -m task_state_guard), its
// arguments and environment, and the stdout it must print when pinned.
type suiteStep struct {
	command string
	args    []string
	env     []string
	want    string
}

const suiteTask = "7a5c0001-0000-4000-8000-000000000001"

var pinnedClock = []string{"TASK_STATE_GUARD_TEST_CLOCK=1", "TASK_STATE_GUARD_TEST_NOW=978307200"}

var smokeSuite = []suiteStep{
	{command: "task-state-guard", args: []string{"--version"}, want: "task-state-guard " + testVersion + "\n"},
	{command: "sweep-state", args: []string{"--version"}, want: "sweep-state " + testVersion + "\n"},
	{command: "module", args: []string{"--version"}, want: "task-state-guard " + testVersion + "\n"},
	{command: "task-state-guard", args: []string{"--db", "tasks.sqlite", "init"}, env: pinnedClock},
	{command: "task-state-guard", args: []string{"--db", "tasks.sqlite", "create", "--task-id", suiteTask, "--timeout-seconds", "900"}, env: pinnedClock},
	{command: "task-state-guard", args: []string{"--db", "tasks.sqlite", "start", suiteTask}, env: pinnedClock},
	{command: "task-state-guard", args: []string{"--db", "tasks.sqlite", "get", suiteTask}, env: pinnedClock},
	{command: "module", args: []string{"--db", "tasks.sqlite", "close", suiteTask, "--status", "succeeded"}, env: pinnedClock},
	{command: "module", args: []string{"--db", "tasks.sqlite", "get", suiteTask}, env: pinnedClock},
	// A refusal: its exit status and error line come through the module.
	{command: "module", args: []string{"--db", "tasks.sqlite", "get", "not-a-task"}, env: pinnedClock},
	{command: "task-state-guard", args: []string{"--db", "tasks.sqlite", "doctor"}, env: pinnedClock},
	{command: "sweep-state", args: []string{"lease-acquire", "--state", "state.yml", "--writer", "w1", "--now", "2026-07-02T12:00:00Z"}, want: "OK\n"},
	{command: "sweep-state", args: []string{"read", "--state", "state.yml"}},
	{command: "sweep-state", args: []string{"lease-acquire", "--state", "state.yml", "--writer", "w2", "--now", "2026-07-02T12:01:00Z"}},
}

// runOutcome is what a call left: its exit status, output and the files
// of its working directory.
type runOutcome struct {
	code           int
	stdout, stderr string
}

func runIn(t *testing.T, dir string, argv []string, env []string) runOutcome {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return runOutcome{code, stdout.String(), stderr.String()}
}

// The artifact smoke test: the host's wheel passes the archive checks,
// installs offline with pip into a fresh virtual environment, and every
// call of the suite gives, through the installed commands and the module,
// the exit status, output and files the release binaries give when run
// directly in the same directory.
func TestWheelInstallsOffline(t *testing.T) {
	// It builds the release with the go command first; asked before the
	// Python, so the Wine run (no go command, no Python) skips it.
	platformtest.GoCommand(t)
	python := requirePython(t)
	dist := releasedForHost(t)
	tg := hostTarget(t)
	wheel := filepath.Join(dist, wheelName(tg, testVersion))
	if err := verifyWheel(wheel, tg, testVersion); err != nil {
		t.Fatal(err)
	}

	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(python, "-m", "venv", venv).CombinedOutput(); err != nil {
		t.Fatalf("python -m venv: %v\n%s", err, out)
	}
	bin := filepath.Join(venv, "bin")
	venvPython := filepath.Join(bin, "python")
	if platformtest.Windows {
		bin = filepath.Join(venv, "Scripts")
		venvPython = filepath.Join(bin, "python.exe")
	}
	install := exec.Command(venvPython, "-m", "pip", "install", "--no-index", "--no-deps", wheel)
	install.Env = offlinePip()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}

	installed := func(s suiteStep) []string {
		if s.command == "module" {
			return append([]string{venvPython, "-m", pythonPackage}, s.args...)
		}
		return append([]string{filepath.Join(bin, tg.exe(s.command))}, s.args...)
	}
	direct := func(s suiteStep) []string {
		cli := s.command
		if cli == "module" {
			cli = "task-state-guard"
		}
		name := fmt.Sprintf("%s_%s_%s_%s", cli, testVersion, tg.goos, tg.goarch)
		return append([]string{filepath.Join(dist, tg.exe(name))}, s.args...)
	}
	// Both runs use one directory path, emptied between them, so that
	// output naming a path is the same for both.
	work := filepath.Join(t.TempDir(), "work")
	runSuite := func(argv func(suiteStep) []string) ([]runOutcome, map[string][]byte) {
		if err := os.RemoveAll(work); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(work, 0o700); err != nil {
			t.Fatal(err)
		}
		var outcomes []runOutcome
		for _, s := range smokeSuite {
			outcomes = append(outcomes, runIn(t, work, argv(s), s.env))
		}
		state, err := os.ReadFile(filepath.Join(work, "state.yml"))
		if err != nil {
			t.Fatal(err)
		}
		return outcomes, map[string][]byte{"state.yml": state}
	}
	viaDirect, directFiles := runSuite(direct)
	viaInstalled, installedFiles := runSuite(installed)

	sawRefusal := false
	for i, s := range smokeSuite {
		d, in := viaDirect[i], viaInstalled[i]
		if d != in {
			t.Errorf("%s %q: installed gave %+v, the binary directly %+v", s.command, s.args, in, d)
		}
		if s.want != "" && d.stdout != s.want {
			t.Errorf("%s %q printed %q, want %q", s.command, s.args, d.stdout, s.want)
		}
		if d.code != 0 && s.command == "module" {
			sawRefusal = true
		}
	}
	if !sawRefusal {
		t.Errorf("no call of the suite exercised a non-zero exit status through the module")
	}
	if !bytes.Equal(directFiles["state.yml"], installedFiles["state.yml"]) {
		t.Errorf("state.yml differs: installed wrote %q, the binary directly %q", installedFiles["state.yml"], directFiles["state.yml"])
	}
}
