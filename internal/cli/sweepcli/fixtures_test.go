package sweepcli_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
	"github.com/stateguard/stateguard/model/value"
)

// fixtureDir holds the recorded behaviour of the reference engine (README
// there; located by internal/testsupport/testfixtures).
func fixtureDir(t *testing.T) string {
	return testfixtures.Dir(t, "sweep")
}

type fixtureStep struct {
	Kind       string   `json:"kind"`
	Args       []string `json:"args"`
	RC         int      `json:"rc"`
	Stdout     string   `json:"stdout"`
	StateAfter *string  `json:"state_after"`
	Path       string   `json:"path"`
	ContentB64 string   `json:"content_b64"`
}

type fixture struct {
	State string        `json:"state"`
	Steps []fixtureStep `json:"steps"`
}

// TestFixtureReplay replays every recorded sequence and edge case against the
// built binary, in a fresh working directory each, comparing exit status,
// stdout and the state file's bytes and mode after every call.
func TestFixtureReplay(t *testing.T) {
	root := fixtureDir(t)
	for _, sub := range []string{"edge", "sequences", "python-written"} {
		files, _ := filepath.Glob(filepath.Join(root, sub, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no fixtures in %s", sub)
		}
		for _, f := range files {
			name := sub + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				replayFixture(t, f)
			})
		}
	}
}

func replayFixture(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	if d, ok := divergedFixtures[filepath.Base(filepath.Dir(file))+"/"+strings.TrimSuffix(filepath.Base(file), ".json")]; ok {
		answer := d.answer
		answer.Args = fx.Steps[d.step].Args
		fx.Steps = append(fx.Steps[:d.step:d.step], answer)
	}
	dir := t.TempDir()
	statePath := filepath.Join(dir, fx.State)
	for i, st := range fx.Steps {
		switch st.Kind {
		case "write":
			data, err := base64.StdEncoding.DecodeString(st.ContentB64)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, st.Path)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
		case "rm":
			os.Remove(filepath.Join(dir, st.Path))
		case "mkdir":
			os.MkdirAll(filepath.Join(dir, st.Path), 0o755)
		case "run":
			before, _ := os.ReadFile(statePath)
			var stdout, stderr bytes.Buffer
			err := platformtest.RetryWineStart(t, func() error {
				cmd := exec.Command(binPath, st.Args...)
				cmd.Dir = dir
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				return cmd.Run()
			})
			rc := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				rc = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			where := func() string { return "step " + itoa(i+1) + " " + strings.Join(quoteAll(st.Args), " ") }
			if rc != st.RC {
				t.Fatalf("%s: exit %d, want %d (stderr %q)", where(), rc, st.RC, stderr.String())
			}
			if stdout.String() != st.Stdout {
				t.Fatalf("%s: stdout\n%q\nwant\n%q", where(), stdout.String(), st.Stdout)
			}
			got, err := os.ReadFile(statePath)
			switch {
			case st.StateAfter == nil:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s: state file exists, want absent (%v)", where(), err)
				}
			case err != nil:
				t.Fatalf("%s: %v", where(), err)
			case string(got) != *st.StateAfter && !unwrittenRaw(file, before, got, *st.StateAfter):
				t.Fatalf("%s: state file\n%s\nwant\n%s", where(), got, *st.StateAfter)
			default:
				fi, _ := os.Stat(statePath)
				// Files the test itself wrote keep their 0600 too.
				if platformtest.HasPOSIXModes && fi.Mode().Perm() != 0o600 {
					t.Fatalf("%s: mode %v, want 0600", where(), fi.Mode().Perm())
				}
			}
		default:
			t.Fatalf("unknown step kind %q", st.Kind)
		}
	}
}

// unwrittenRaw reports the one case where the file may differ from the
// recording: a python-written fixture's raw file that the call did not
// write (its bytes are as before the call). The recorded state_after is
// D8-normalised text, so the raw file must hold exactly its document: the
// same keys in the same order and the same values.
func unwrittenRaw(fixtureFile string, before, got []byte, want string) bool {
	if filepath.Base(filepath.Dir(fixtureFile)) != "python-written" || !bytes.Equal(before, got) {
		return false
	}
	gotDoc, err1 := yamlsubset.Parse(got)
	wantDoc, err2 := yamlsubset.Parse([]byte(want))
	return err1 == nil && err2 == nil && value.EqualOrdered(gotDoc, wantDoc)
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		b, _ := json.Marshal(a)
		out[i] = string(b)
	}
	return out
}

// divergedFixture is a recording whose step (index) a divergence answers
// otherwise: the steps before it replay as recorded, that step is
// replayed with the divergence's answer, and the steps after it, which
// build on the recorded answer, are left out (the divergence's own script
// pins what follows).
type divergedFixture struct {
	step   int
	answer fixtureStep // its Args are the recorded step's
}

var divergedFixtures = map[string]divergedFixture{
	// D14: a --now the staleness check cannot read is misuse, nothing
	// written (scripts-tests/sweep/testdata/lease_stale_reclaim.txtar).
	"edge/lease-unparseable-timestamp-never-stale": {step: 0, answer: fixtureStep{Kind: "run", RC: 2}},
}
