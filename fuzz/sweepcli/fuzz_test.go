package sweepcli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stateguard/stateguard/impl/sweepstate/cli"
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
// 2 prints nothing on stdout; exit 0 prints a status word or help first;
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
		"",
	} {
		f.Add(seed)
	}
	cli.Clock = func() time.Time { return time.Date(2026, 7, 2, 12, 30, 0, 0, time.UTC) }
	f.Fuzz(func(t *testing.T, argv string) {
		var args []string
		if argv != "" {
			args = strings.Split(argv, "\x00")
		}
		for _, a := range args {
			// Stay inside the temporary directory: no path separators.
			if strings.ContainsAny(a, `/\`) {
				t.Skip()
			}
		}
		dir := t.TempDir()
		t.Chdir(dir)
		if err := os.WriteFile("corrupt.yml", []byte(corruptState), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("state.yml", []byte(validState), 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		rc := cli.Main(args, &stdout, &stderr)
		switch rc {
		case 0:
			first, _, _ := strings.Cut(stdout.String(), "\n")
			if !words[first] && !strings.HasPrefix(first, "usage: ") {
				t.Fatalf("argv %q: first line %q is no status word", args, first)
			}
			if words[first] && !allUTF8(args) {
				t.Fatalf("argv %q: an argument that is not valid UTF-8 reached the engine (%s)", args, first)
			}
		case 2:
			if stdout.Len() != 0 {
				t.Fatalf("argv %q: misuse printed on stdout: %q", args, stdout.String())
			}
		default:
			t.Fatalf("argv %q: exit %d", args, rc)
		}
		if got, err := os.ReadFile("corrupt.yml"); err != nil || string(got) != corruptState {
			t.Fatalf("argv %q: corrupt.yml changed: %q %v", args, got, err)
		}
	})
}

func allUTF8(args []string) bool {
	for _, a := range args {
		if !utf8.ValidString(a) {
			return false
		}
	}
	return true
}
