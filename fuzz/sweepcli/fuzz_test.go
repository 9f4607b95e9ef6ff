package sweepcli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/cli/version"
)

// corruptState is a state file the engine must refuse and never rewrite.
const corruptState = "schema_version: 1\nthis line has no colon\n"

// validState gives the fuzzer a lease, an item and a cursor to work with.
const validState = `schema_version: 1
lease:
  writer: "w1"
  timestamp: "2026-07-02T12:00:00Z"
  ttl_minutes: 5
sources:
  gh:
    cursor: "9"
items:
  "gh:9":
    source: "gh"
    status: "closed"
    id: "9"
`

var words = map[string]bool{
	"OK": true, "NO-STATE": true, "CORRUPT": true, "LOCKED": true,
	"STALE-RECLAIMED": true, "LEASE-LOST": true, "REFUSED": true, "ERROR": true,
}

// FuzzArgv runs random argv (NUL-separated) against a temporary directory
// holding state.yml and corrupt.yml. It checks: no panic; exit 0 or 2; exit
// 2 prints nothing on stdout; exit 0 prints a status word, help or the version first;
// corrupt.yml keeps its bytes.
func FuzzArgv(f *testing.F) {
	for _, seed := range []string{
		"read\x00--state\x00state.yml",
		"read\x00--state\x00corrupt.yml",
		"lease-acquire\x00--state\x00corrupt.yml\x00--writer\x00w2\x00--now\x002026-07-02T12:06:00Z",
		"lease-acquire\x00--sta=state.yml\x00--wri\x00w2\x00--ttl\x00-5",
		"upsert-item\x00--state\x00state.yml\x00--source\x00gh\x00--id\x0010\x00--json\x00{\"x\": NaN}\x00--writer\x00w1",
		"cursor-advance\x00--state\x00state.yml\x00--source\x00gh\x00--to\x00-5\x00--past-item\x009\x00--writer\x00w1\x00--now\x00x",
		"run-record\x00--state\x00new.yml\x00--writer\x00w\x00--outcome\x00partial\x00--counts\x00[1]\x00--timestamp\x00t",
		"import-legacy\x00--state\x00state.yml\x00--file\x00corrupt.yml\x00--source-map\x00{}",
		"validate\x00--state\x00state.yml",
		"lease-release\x00--state\x00state.yml\x00--writer\x00w1\x00-h",
		"--help",
		"--vers",
		"",
		"upsert-item\x00--state\x00state.yml\x00--source\x00gh/x\x00--id\x00a/b\x00--json\x00{\"url\": \"https://example.com/a/b\", \"body\": \"1/2\"}\x00--writer\x00w1",
		"run-record\x00--state=state.yml\x00--writer\x00w/1\x00--outcome\x00completed\x00--counts\x00{\"by/source\": 1}\x00--timestamp\x00t",
		"import-legacy\x00--st\x00state.yml\x00--file\x00corrupt.yml\x00--source-map\x00{\"C1\": \"a/b\"}",
		"merge\x00--base\x00none.yml\x00--ours\x00state.yml\x00--theirs\x00corrupt.yml\x00--published\x00ours",
		"merge\x00--base\x00state.yml\x00--ours\x00new.yml\x00--theirs\x00state.yml\x00--pub\x00theirs",
	} {
		f.Add(seed)
	}
	sweepcli.Clock = func() time.Time { return time.Date(2026, 7, 2, 12, 30, 0, 0, time.UTC) }
	f.Fuzz(func(t *testing.T, argv string) {
		var args []string
		if argv != "" {
			args = strings.Split(argv, "\x00")
		}
		if leavesDir(args) {
			t.Skip()
		}
		dir := t.TempDir()
		t.Chdir(dir)
		writeFixtures(t, dir)
		var stdout, stderr bytes.Buffer
		rc := sweepcli.Main(args, &stdout, &stderr)
		if strings.Contains(stderr.String(), "error: internal error") {
			t.Fatalf("argv %q: a panic was recovered: %q", args, stderr.String())
		}
		switch rc {
		case 0:
			first, _, _ := strings.Cut(stdout.String(), "\n")
			// A status word, help (usage first) or --version.
			if !words[first] && !strings.HasPrefix(first, "usage: ") && first != "sweep-state "+version.String() {
				t.Fatalf("argv %q: first line %q is no status word", args, first)
			}
			if words[first] && !allUTF8(args) {
				checkDiscarded(t, args, stdout.String(), stderr.String())
			}
			wantLines := 0
			if first == "ERROR" {
				wantLines = 1
			}
			if e := stderr.String(); strings.Count(e, "\n") != wantLines || (wantLines == 1 && !strings.HasSuffix(e, "\n")) {
				t.Fatalf("argv %q: %s wrote %q on stderr, want %d line(s)", args, first, e, wantLines)
			}
		case 2:
			if stdout.Len() != 0 {
				t.Fatalf("argv %q: misuse printed on stdout: %q", args, stdout.String())
			}
			if !strings.HasPrefix(stderr.String(), "usage: sweep-state") {
				t.Fatalf("argv %q: misuse without a usage line: %q", args, stderr.String())
			}
			if got, err := os.ReadFile("state.yml"); err != nil || string(got) != validState {
				t.Fatalf("argv %q: misuse changed state.yml: %q %v", args, got, err)
			}
		default:
			t.Fatalf("argv %q: exit %d", args, rc)
		}
		if got, err := os.ReadFile("corrupt.yml"); err != nil || string(got) != corruptState {
			t.Fatalf("argv %q: corrupt.yml changed: %q %v", args, got, err)
		}
	})
}

// checkDiscarded is D9's oracle for a call that ran although some argument
// is not valid UTF-8: argparse keeps only an option's last value, so such an
// argument must be an overridden value, discarded unread. Replacing its bad
// bytes by two different valid texts must then change nothing: same exit,
// output, directory listing and file bytes. A value that reached the
// engine (a writer, an id, a path) would make the two runs differ.
func checkDiscarded(t *testing.T, args []string, stdout, stderr string) {
	t.Helper()
	orig := snapshotDir(t, ".")
	for _, repl := range []string{"Z", "Y"} {
		alt := make([]string, len(args))
		for i, a := range args {
			alt[i] = strings.ToValidUTF8(a, repl)
		}
		dir := t.TempDir()
		writeFixtures(t, dir)
		var out, errOut bytes.Buffer
		t.Chdir(dir)
		rc := sweepcli.Main(alt, &out, &errOut)
		if rc != 0 || out.String() != stdout || errOut.String() != stderr {
			t.Fatalf("argv %q: an argument that is not valid UTF-8 was used: with it replaced (%q) exit %d %q %q, want 0 %q %q",
				args, alt, rc, out.String(), errOut.String(), stdout, stderr)
		}
		if got := snapshotDir(t, "."); got != orig {
			t.Fatalf("argv %q: an argument that is not valid UTF-8 was used: files differ once it is replaced:\n%s\nvs\n%s", args, orig, got)
		}
	}
}

// snapshotDir lists the names and bytes of the files in dir, in order.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%q %q\n", e.Name(), data)
	}
	return b.String()
}

func writeFixtures(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "corrupt.yml"), []byte(corruptState), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.yml"), []byte(validState), 0o600); err != nil {
		t.Fatal(err)
	}
}

// leavesDir reports whether a path argument (a value of --state or --file,
// given through any prefix of those flags) could name something outside
// the temporary directory. Other values, JSON and URLs among them, may hold
// separators freely.
func leavesDir(args []string) bool {
	for i, a := range args {
		if a == "merge-driver" {
			// It runs git on the directory it is called in and takes
			// paths as positionals: the script tests cover it.
			return true
		}
		if a == "--" {
			// Everything after is a value (and misuse), but stay safe.
			return false
		}
		name, val, explicit := strings.Cut(a, "=")
		isPath := false
		for _, opt := range []string{"--state", "--file", "--base", "--ours", "--theirs"} {
			isPath = isPath || strings.HasPrefix(opt, name)
		}
		if len(name) <= 2 || !isPath {
			continue
		}
		if !explicit {
			if i+1 >= len(args) {
				continue
			}
			val = args[i+1]
		}
		if strings.ContainsAny(val, `/\`) {
			return true
		}
	}
	return false
}

func allUTF8(args []string) bool {
	for _, a := range args {
		if !utf8.ValidString(a) {
			return false
		}
	}
	return true
}
