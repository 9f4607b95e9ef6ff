package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

func TestLastStatus(t *testing.T) {
	out := []byte(`fuzz: elapsed: 0s, gathering baseline coverage: 0/19 completed
fuzz: elapsed: 3s, execs: 21 (7/sec), new interesting: 0 (total: 19)
fuzz: elapsed: 41s, execs: 742 (18/sec), new interesting: 12 (total: 31)
PASS
`)
	st, ok := lastStatus(out)
	if !ok || st.elapsed != 41*time.Second || st.execs != 742 || st.newInteresting != 12 || st.total != 31 {
		t.Fatalf("lastStatus = %+v, %v", st, ok)
	}
	if _, ok := lastStatus([]byte("ok  \tpkg\t0.1s\n")); ok {
		t.Fatal("a run without progress lines has no status")
	}
}

func TestFuzzNames(t *testing.T) {
	got := fuzzNames([]byte("FuzzA\nTestB\nFuzzC\nok  \tpkg\t0.01s\n"))
	if strings.Join(got, ",") != "FuzzA,FuzzC" {
		t.Fatalf("fuzzNames = %q", got)
	}
}

func TestCopyNewKeepsExistingEntries(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "a", "b")
	for name, body := range map[string]string{"x": "1", "y": "2"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := copyNew(src, dst); n != 2 || err != nil {
		t.Fatalf("first copy: %d %v", n, err)
	}
	os.WriteFile(filepath.Join(dst, "x"), []byte("kept"), 0o644)
	if n, err := copyNew(src, dst); n != 0 || err != nil {
		t.Fatalf("second copy: %d %v", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "x")); string(b) != "kept" {
		t.Fatal("an existing entry was overwritten")
	}
	if n, err := copyNew(filepath.Join(src, "missing"), dst); n != 0 || err != nil {
		t.Fatalf("missing source: %d %v", n, err)
	}
}

func TestFlags(t *testing.T) {
	var stderr bytes.Buffer
	for _, bad := range [][]string{{"-parallel", "0"}, {"-workers", "0"}, {"-fuzztime", "0s"}, {"-minimizetime", "-1s"}, {"-run", "("}, {"extra"}} {
		if code := run(bad, &bytes.Buffer{}, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}
	if c, err := parseFlags(nil, &stderr); err != nil || c.minimizetime != 5*time.Second {
		t.Errorf("default -minimizetime %v (%v), want 5s", c.minimizetime, err)
	}
}

// TestCampaign runs fuzzrun end to end on a throwaway module with two
// targets: one that fails on the first mutated input and one that never
// fails. It checks the crasher lands in testdata/fuzz and in -crashers,
// the corpus cache is restored and saved, the table has both rows, and
// the exit status is 1. Skipped with -short (it builds with fuzzing
// instrumentation: a few seconds).
func TestCampaign(t *testing.T) {
	platformtest.GoCommand(t)
	if testing.Short() {
		t.Skip("builds and fuzzes a module")
	}
	mod := filepath.Join(t.TempDir(), "mod")
	importPath := fmt.Sprintf("example.com/fuzzrune2e%d", time.Now().UnixNano())
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+importPath+"\n\ngo 1.24\n")
	write("t/t_test.go", `package t

import "testing"

func FuzzBoom(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if string(b) != "seed" {
			t.Fatal("boom")
		}
	})
}

func FuzzQuiet(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, n int) {})
}
`)
	gocache, err := goEnv("GOCACHE")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(gocache, "fuzz", importPath)) })
	cache, crashers := t.TempDir(), t.TempDir()
	// A corpus entry from an earlier night, for FuzzQuiet.
	old := filepath.Join(cache, importPath, "t", "FuzzQuiet", "0123456789abcdef")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("go test fuzz v1\nint(42)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(mod)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-pkgs", "./...", "-fuzztime", "1s", "-parallel", "2", "-cache", cache, "-crashers", crashers}, &stdout, &stderr)
	out := stdout.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, stderr.String())
	}
	if !regexp.MustCompile(`(?m)^\s+t\s+FuzzBoom\s+\d+\s+\S+\s+\d+\s+\d+\s+1\s+FAIL\s*$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\s+t\s+FuzzQuiet\s+[1-9]\d*\s+\d+\s+\d+\s+[1-9]\d*\s+0\s+ok\s*$`).MatchString(out) {
		t.Fatalf("table rows missing or wrong:\n%s", out)
	}
	seeds, _ := os.ReadDir(filepath.Join(mod, "t", "testdata", "fuzz", "FuzzBoom"))
	copied, _ := os.ReadDir(filepath.Join(crashers, importPath, "t", "FuzzBoom"))
	if len(seeds) != 1 || len(copied) != 1 || seeds[0].Name() != copied[0].Name() {
		t.Fatalf("crasher: %d in testdata, %d in -crashers", len(seeds), len(copied))
	}
	if _, err := os.Stat(filepath.Join(gocache, "fuzz", importPath, "t", "FuzzQuiet", "0123456789abcdef")); err != nil {
		t.Fatalf("cached corpus entry not restored: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(old)); len(entries) < 1 {
		t.Fatal("corpus not saved back")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal(err)
	}
}

// TestOnlyDeadlineFailure: the end of -fuzztime reported as a failure is
// no finding; any other text under the FAIL line is.
func TestOnlyDeadlineFailure(t *testing.T) {
	const progress = "fuzz: elapsed: 8s, execs: 1200 (150/sec), new interesting: 0 (total: 9)\n"
	for _, c := range []struct {
		out  string
		want bool
	}{
		{progress + "--- FAIL: FuzzX (8.02s)\n    context deadline exceeded\nFAIL\nexit status 1\nFAIL\tpkg\t8.1s\n", true},
		{progress + "--- FAIL: FuzzX (8.02s)\n    x_test.go:12: oracle: got 1, want 2\n    context deadline exceeded\nFAIL\n", false},
		{progress + "--- FAIL: FuzzX (8.02s)\n    context deadline exceeded\n    could not write the failing input: disk full\nFAIL\n", false},
		{progress + "--- FAIL: FuzzX (0.10s)\n    fuzzing process hung or terminated unexpectedly: exit status 2\nFAIL\n", false},
		{progress + "ok\tpkg\t8.1s\n", false},
	} {
		if got := onlyDeadlineFailure([]byte(c.out)); got != c.want {
			t.Errorf("%q: %v, want %v", c.out, got, c.want)
		}
	}
}

// TestToolArgs: a compiler invocation marked uninstrumented loses go
// test's instrumentation flag; an unmarked one, another tool, and the
// version probe go runs through the toolexec pass unchanged.
func TestToolArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/go/pkg/tool/compile -p modernc.org/sqlite/lib -d=libfuzzer=0 -d=libfuzzer -o x.a", "/go/pkg/tool/compile -p modernc.org/sqlite/lib -d=libfuzzer=0 -o x.a"},
		{`C:\go\pkg\tool\compile.exe -d=libfuzzer=0 -d=libfuzzer`, `C:\go\pkg\tool\compile.exe -d=libfuzzer=0`},
		{"/go/pkg/tool/compile -p example.com/ours -d=libfuzzer -o x.a", "/go/pkg/tool/compile -p example.com/ours -d=libfuzzer -o x.a"},
		{"/go/pkg/tool/link -d=libfuzzer=0 -d=libfuzzer", "/go/pkg/tool/link -d=libfuzzer=0 -d=libfuzzer"},
		{"/go/pkg/tool/compile -V=full", "/go/pkg/tool/compile -V=full"},
	} {
		in := strings.Fields(c.in)
		if runtime.GOOS != "windows" && strings.Contains(c.in, `\`) {
			in[0] = "compile.exe" // filepath.Base splits on / only here
		}
		got := strings.Join(toolArgs(in)[1:], " ")
		if want := strings.Join(strings.Fields(c.want)[1:], " "); got != want {
			t.Errorf("toolArgs(%q) = %q, want %q", c.in, got, want)
		}
	}
	if args := unguidedArgs("/bin/fuzzrun"); strings.Join(args, " ") !=
		"-toolexec=/bin/fuzzrun -gcflags=modernc.org/...=-d=libfuzzer=0 -gcflags=std=-d=libfuzzer=0" {
		t.Errorf("unguidedArgs = %q", args)
	}
}
