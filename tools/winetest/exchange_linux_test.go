//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/storage/durable"
)

// exchange runs one command line of the same CLI on Linux and, under Wine,
// its Windows build, each on its own files.
type exchange struct {
	t                  *testing.T
	wine               string
	wineEnv            []string
	linuxBin, winBin   map[string]string // command name -> binary
	linuxDir, windowsD string            // where each side's files live
}

// prepareWine makes (or reuses) a private Wine prefix for this test, with
// the ProcessPrng shim, and starts its server; without wine64 and mingw-w64
// it skips, except under CI=true, where they are expected (.ci/run installs
// them first).
func prepareWine(t *testing.T) (wine string, env []string) {
	wine, err := lookTool("wine64", "wine")
	gcc, gerr := lookTool("x86_64-w64-mingw32-gcc")
	if err == nil {
		err = gerr
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	// A prefix of its own: winetest's is locked for the whole of a suite run.
	prefix := filepath.Join(cache, "stateguard-winetest", "exchange-prefix")
	if err := os.MkdirAll(prefix, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := durable.Acquire(prefix + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Unlock() })
	env = append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=")
	if err := makePrefix(wine, prefix, env); err != nil {
		t.Fatal(err)
	}
	if err := buildShim(gcc, ".", prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopWineserver(wine, env) })
	if err := startWine(wine, env); err != nil {
		t.Fatal(err)
	}
	return wine, env
}

// buildCommands builds sweep-state and task-state-guard for goos into dir.
func buildCommands(t *testing.T, goos, dir string) map[string]string {
	t.Helper()
	bins := map[string]string{}
	for _, name := range []string{"sweep-state", "task-state-guard"} {
		exe := filepath.Join(dir, name)
		if goos == "windows" {
			exe += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", exe, "github.com/stateguard/stateguard/cmd/"+name)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s for %s: %v\n%s", name, goos, err, out)
		}
		bins[name] = exe
	}
	return bins
}

// winPath is p as the Windows build names it: Wine maps drive Z: to /.
func winPath(p string) string { return "Z:" + strings.ReplaceAll(p, "/", `\`) }

// run runs the command on one side with args, in which "FILE" stands for
// that side's copy of file, and returns stdout and the exit code.
func (x *exchange) run(windows bool, env []string, name, file string, args ...string) (string, int) {
	x.t.Helper()
	path := filepath.Join(x.linuxDir, file)
	var cmd *exec.Cmd
	if windows {
		path = winPath(filepath.Join(x.windowsD, file))
		cmd = exec.Command(x.wine, x.winBin[name])
		cmd.Env = append(append([]string{}, x.wineEnv...), env...)
	} else {
		cmd = exec.Command(x.linuxBin[name])
		cmd.Env = append(os.Environ(), env...)
	}
	for _, a := range args {
		cmd.Args = append(cmd.Args, strings.ReplaceAll(a, "FILE", path))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		x.t.Fatalf("%v: %v", cmd.Args, err)
	}
	return stdout.String(), rc
}

// both runs the same call on both sides and requires the same answer.
func (x *exchange) both(env []string, name, file string, args ...string) string {
	x.t.Helper()
	lo, lrc := x.run(false, env, name, file, args...)
	wo, wrc := x.run(true, env, name, file, args...)
	if lo != wo || lrc != wrc {
		x.t.Fatalf("%s %v: Linux answered %q (exit %d), Windows %q (exit %d)", name, args, lo, lrc, wo, wrc)
	}
	return lo
}

// swap moves each side's files to the other: Linux gets what Windows
// wrote and the reverse. A file moved to Linux gets a mode there; the
// ledger's read-only commands require a private one (spec 12.1), as any
// copy made for this user would have.
func (x *exchange) swap(files ...string) {
	x.t.Helper()
	for _, f := range files {
		l, w := filepath.Join(x.linuxDir, f), filepath.Join(x.windowsD, f)
		lb, err := os.ReadFile(l)
		if err != nil {
			x.t.Fatal(err)
		}
		wb, err := os.ReadFile(w)
		if err != nil {
			x.t.Fatal(err)
		}
		if err := os.WriteFile(l, wb, 0o600); err != nil {
			x.t.Fatal(err)
		}
		if err := os.WriteFile(w, lb, 0o600); err != nil {
			x.t.Fatal(err)
		}
		for _, p := range []string{l, w} {
			if err := os.Chmod(p, 0o600); err != nil {
				x.t.Fatal(err)
			}
		}
	}
}

// TestFilesExchangedWithWindows: a sweep state file and a ledger written by
// the Windows build (under Wine) are read and changed by the Linux build,
// and the reverse; the formats are one (spec: the files are the contract).
// Each call runs on both sides with the same pinned clock and must answer
// the same bytes; the state files the two write for the same calls are
// byte-identical, before and after the exchange; the ledgers, exchanged,
// are healthy to the other side's doctor and give the same get and list.
// It runs in the Linux go test runs (about 30 s, most of it Wine starting
// processes). Broken on purpose by making internal/storage/durable's writer put a
// "#" comment line first where the path separator is a backslash: "written:
// the state files differ".
func TestFilesExchangedWithWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Windows build under Wine")
	}
	wine, env := prepareWine(t)
	x := &exchange{t: t, wine: wine, wineEnv: env,
		linuxBin: buildCommands(t, "linux", t.TempDir()),
		winBin:   buildCommands(t, "windows", t.TempDir()),
		linuxDir: t.TempDir(), windowsD: t.TempDir()}
	sameState := func(stage string) {
		t.Helper()
		lb, err := os.ReadFile(filepath.Join(x.linuxDir, "state.yml"))
		if err != nil {
			t.Fatal(err)
		}
		wb, err := os.ReadFile(filepath.Join(x.windowsD, "state.yml"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(lb, wb) {
			t.Fatalf("%s: the state files differ\nLinux:\n%s\nWindows:\n%s", stage, lb, wb)
		}
	}

	// Each side writes a state file with the same calls.
	x.both(nil, "sweep-state", "state.yml", "lease-acquire", "--state", "FILE", "--writer", "w1", "--now", "2026-07-02T12:00:00Z")
	x.both(nil, "sweep-state", "state.yml", "upsert-item", "--state", "FILE", "--source", "gh", "--id", "1",
		"--json", `{"status": "ingested", "title": "ünïcode, \"quoted\"\nand two lines"}`, "--writer", "w1", "--now", "2026-07-02T12:01:00Z")
	x.both(nil, "sweep-state", "state.yml", "cursor-advance", "--state", "FILE", "--source", "gh", "--to", "5", "--past-item", "1",
		"--writer", "w1", "--now", "2026-07-02T12:02:00Z")
	sameState("written")

	// Each side writes a ledger with the same calls.
	clock := func(now string) []string {
		return []string{"TASK_STATE_GUARD_TEST_CLOCK=1", "TASK_STATE_GUARD_TEST_NOW=" + now}
	}
	const a, b = "00000000-0000-4000-8000-00000000e0a1", "00000000-0000-4000-8000-00000000e0b2"
	tsg := func(now string, args ...string) string {
		return x.both(clock(now), "task-state-guard", "tasks.sqlite",
			append([]string{"--db", "FILE", "--allow-external-acl"}, args...)...)
	}
	tsg("1000", "create", "--task-id", a, "--timeout-seconds", "30")
	tsg("1001", "create", "--task-id", b, "--parent-id", a, "--internal")
	tsg("1002", "start", a)
	tsg("1003", "close", b, "--status", "succeeded")
	// Each call closed its ledger: no sidecar is left to move with it.
	for _, dir := range []string{x.linuxDir, x.windowsD} {
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(filepath.Join(dir, "tasks.sqlite"+suffix)); err == nil {
				t.Fatalf("tasks.sqlite%s left in %s after the calls", suffix, dir)
			}
		}
	}

	// Exchanged: each side reads what the other wrote, then changes it.
	x.swap("state.yml", "tasks.sqlite")
	x.both(nil, "sweep-state", "state.yml", "read", "--state", "FILE")
	x.both(nil, "sweep-state", "state.yml", "cursor-get", "--state", "FILE", "--source", "gh")
	x.both(nil, "sweep-state", "state.yml", "upsert-item", "--state", "FILE", "--source", "gh", "--id", "2",
		"--json", `{"status": "seen"}`, "--writer", "w1", "--now", "2026-07-02T12:03:00Z")
	sameState("exchanged and changed")

	doctor := tsg("1004", "doctor")
	var rep struct{ Healthy bool }
	if err := json.Unmarshal([]byte(doctor), &rep); err != nil || !rep.Healthy {
		t.Fatalf("doctor of the exchanged ledgers: %s %v", doctor, err)
	}
	tsg("1004", "get", a)
	tsg("1004", "list")
	tsg("1005", "close", a, "--status", "failed")
	tsg("1006", "delivery", a, "--status", "delivered")
	tsg("1007", "reconcile", "--active-grace-seconds", "1", "--delivery-grace-seconds", "1")
	tsg("1008", "children", a)
	if out := tsg("1008", "list"); !strings.Contains(out, b) {
		t.Fatalf("list after the exchange: %s", out)
	}
	doctor = tsg("1009", "doctor")
	if err := json.Unmarshal([]byte(doctor), &rep); err != nil || !rep.Healthy {
		t.Fatalf("doctor after changes on the other side: %s %v", doctor, err)
	}
}
