package sweep_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// fixtureFile is one recorded sweep scenario (fixtures/README.md).
type fixtureFile struct {
	State string        `json:"state"`
	Steps []fixtureStep `json:"steps"`
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

// TestFixtureReplay drives the model through every recorded sequence and
// edge case, step by step, and compares the status word, the payload and
// the next document with the reference's recording. The file system is a
// map; the test parses files and arguments, the model only decides.
func TestFixtureReplay(t *testing.T) {
	root := testfixtures.Dir(t, "sweep")
	var files []string
	for _, sub := range []string{"sequences", "edge", "python-written"} {
		m, err := filepath.Glob(filepath.Join(root, sub, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 176 {
		t.Fatalf("found %d fixture files, want 176", len(files))
	}
	sort.Strings(files)
	for _, path := range files {
		name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var fx fixtureFile
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}
			replay(t, fx)
		})
	}
}

func replay(t *testing.T, fx fixtureFile) {
	fs := map[string][]byte{} // the working directory, by relative path
	for i, step := range fx.Steps {
		switch step.Kind {
		case "write":
			b, err := base64.StdEncoding.DecodeString(step.ContentB64)
			if err != nil {
				t.Fatal(err)
			}
			fs[step.Path] = b
			continue
		case "rm":
			delete(fs, step.Path)
			continue
		case "mkdir":
			continue
		}
		where := fmt.Sprintf("step %d %q", i+1, step.Args)
		cmd, statePath, err := parseArgv(step.Args, fs)
		if step.RC != 0 {
			if err == nil {
				t.Fatalf("%s: recorded exit %d, but the test's argv reading accepted it", where, step.RC)
			}
			continue // command-line misuse never reaches the engine
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if statePath != fx.State {
			t.Fatalf("%s: state path %q, fixture says %q", where, statePath, fx.State)
		}
		b, exists := fs[fx.State]
		before := loadState(b, exists)
		res, next := sweep.Apply(before, cmd)
		if got := stdoutOf(res); got != step.Stdout {
			t.Fatalf("%s: stdout\n got %q\nwant %q", where, got, step.Stdout)
		}
		checkNext(t, where, res, next, fs, fx.State, step.StateAfter)
	}
}

// checkNext compares the model's next state with the recorded file and then
// puts the recorded bytes in place for the next step.
func checkNext(t *testing.T, where string, res sweep.Result, next sweep.State, fs map[string][]byte, statePath string, after *string) {
	t.Helper()
	if after == nil {
		if next.Kind != sweep.Absent || res.Wrote {
			t.Fatalf("%s: model leaves kind %d (wrote %v), recording has no file", where, next.Kind, res.Wrote)
		}
		return
	}
	if !res.Wrote {
		// A raw file the reference wrote (the python-written family) stays
		// as it was, while its recording is D8-normalised text: then the
		// two must hold the same document, keys in the same order.
		if string(fs[statePath]) != *after && !sameDocument(fs[statePath], *after) {
			t.Fatalf("%s: model did not write, but the file changed to\n%s", where, *after)
		}
		return
	}
	want, err := yamlsubset.Parse([]byte(*after))
	if err != nil {
		t.Fatalf("%s: recorded state does not parse: %v", where, err)
	}
	if next.Kind != sweep.Parsed || !value.EqualOrdered(next.Doc, want) {
		t.Fatalf("%s: next document\n got %s\nwant %s", where, docText(next), pyjson.Encode(want))
	}
	fs[statePath] = []byte(*after)
}

func docText(st sweep.State) string {
	if st.Kind != sweep.Parsed {
		return fmt.Sprintf("(kind %d)", st.Kind)
	}
	return string(pyjson.Encode(st.Doc))
}

// stdoutOf renders a result as the CLI prints it (§14).
func stdoutOf(res sweep.Result) string {
	out := res.Word + "\n"
	if res.Payload != nil {
		out += string(pyjson.Encode(res.Payload)) + "\n"
	}
	return out
}

// loadState classifies the file's bytes the way the engine's loader does.
func loadState(b []byte, exists bool) sweep.State {
	if !exists {
		return sweep.State{Kind: sweep.Absent}
	}
	if strings.TrimSpace(string(b)) == "" {
		return sweep.State{Kind: sweep.Blank}
	}
	doc, err := yamlsubset.Parse(b)
	if err != nil {
		return sweep.State{Kind: sweep.Unreadable}
	}
	return sweep.State{Kind: sweep.Parsed, Doc: doc}
}

// decodeArg decodes a JSON argument; anything json.loads refuses, or a
// non-finite number (D5), is not OK.
func decodeArg(text string, given bool) sweep.Decoded {
	if !given {
		return sweep.Decoded{}
	}
	v, err := pyjson.Decode(text)
	if err != nil {
		return sweep.Decoded{}
	}
	return sweep.Decoded{Value: v, OK: true}
}

// decodeLegacy reads a legacy file as JSON, or else as the YAML subset.
func decodeLegacy(b []byte, exists bool) sweep.Decoded {
	if !exists {
		return sweep.Decoded{}
	}
	if v, err := pyjson.Decode(string(b)); err == nil {
		return sweep.Decoded{Value: v, OK: true}
	}
	if doc, err := yamlsubset.Parse(b); err == nil {
		return sweep.Decoded{Value: doc, OK: true}
	}
	return sweep.Decoded{}
}

// errMisuse marks argv the CLI refuses with exit status 2.
var errMisuse = errors.New("command-line misuse")

// flagsOf lists each subcommand's long flags (without --state); required
// ones are marked with a trailing '!'.
var flagsOf = map[string][]string{
	"read":           {},
	"validate":       {},
	"upsert-item":    {"source!", "id!", "json!", "writer!", "now"},
	"cursor-get":     {"source!"},
	"cursor-advance": {"source!", "to!", "past-item!", "writer!", "now"},
	"lease-acquire":  {"writer!", "ttl-minutes", "now"},
	"lease-release":  {"writer!"},
	"run-record":     {"writer!", "outcome!", "counts!", "timestamp!"},
	"import-legacy":  {"file!", "source-map"},
}

var negativeNumber = regexp.MustCompile(`^-\d+$|^-\d*\.\d+$`)

// parseArgv reads argv in the argparse forms the fixtures use (--flag v,
// --flag=v, unique prefixes, last repeat wins) into a model command.
func parseArgv(args []string, fs map[string][]byte) (sweep.Command, string, error) {
	if len(args) == 0 {
		return nil, "", errMisuse
	}
	specs, ok := flagsOf[args[0]]
	if !ok {
		return nil, "", errMisuse
	}
	names := []string{"state"}
	required := map[string]bool{"state": true}
	for _, s := range specs {
		n := strings.TrimSuffix(s, "!")
		names = append(names, n)
		required[n] = strings.HasSuffix(s, "!")
	}
	got := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			return nil, "", errMisuse
		}
		flag, val, hasVal := strings.Cut(a[2:], "=")
		var match []string
		for _, n := range names {
			if n == flag {
				match = []string{n}
				break
			}
			if strings.HasPrefix(n, flag) {
				match = append(match, n)
			}
		}
		if len(match) != 1 {
			return nil, "", errMisuse
		}
		if !hasVal {
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && !negativeNumber.MatchString(args[i+1])) {
				return nil, "", errMisuse
			}
			i++
			val = args[i]
		}
		got[match[0]] = val
	}
	for n, req := range required {
		if _, ok := got[n]; req && !ok {
			return nil, "", errMisuse
		}
	}
	_, hasSourceMap := got["source-map"]
	var cmd sweep.Command
	switch args[0] {
	case "read":
		cmd = sweep.Read{}
	case "validate":
		cmd = sweep.Validate{}
	case "upsert-item":
		cmd = sweep.UpsertItem{Source: got["source"], ID: got["id"], Writer: got["writer"], Now: got["now"],
			Item: decodeArg(got["json"], true)}
	case "cursor-get":
		cmd = sweep.CursorGet{Source: got["source"]}
	case "cursor-advance":
		cmd = sweep.CursorAdvance{Source: got["source"], To: got["to"], PastItem: got["past-item"], Writer: got["writer"], Now: got["now"]}
	case "lease-acquire":
		c := sweep.LeaseAcquire{Writer: got["writer"], Now: got["now"]}
		if text, ok := got["ttl-minutes"]; ok {
			n, ok := sweep.PyInt(text)
			if !ok || n.Sign() < 0 {
				return nil, "", errMisuse
			}
			c.TTLMinutes = n
		}
		cmd = c
	case "lease-release":
		cmd = sweep.LeaseRelease{Writer: got["writer"]}
	case "run-record":
		switch got["outcome"] {
		case "completed", "aborted-locked", "partial", "failed":
		default:
			return nil, "", errMisuse
		}
		cmd = sweep.RunRecord{Writer: got["writer"], Outcome: got["outcome"], Timestamp: got["timestamp"],
			Counts: decodeArg(got["counts"], true)}
	case "import-legacy":
		b, exists := fs[got["file"]]
		cmd = sweep.ImportLegacy{Legacy: decodeLegacy(b, exists), SourceMap: decodeArg(got["source-map"], hasSourceMap)}
	}
	if args[0] == "lease-acquire" || args[0] == "upsert-item" || args[0] == "cursor-advance" {
		if got["now"] == "" {
			return nil, "", errors.New("the wall clock is not replayable")
		}
	}
	return cmd, got["state"], nil
}

// sameDocument reports whether raw and text parse to the same document, the
// same keys in the same order.
func sameDocument(raw []byte, text string) bool {
	a, err1 := yamlsubset.Parse(raw)
	b, err2 := yamlsubset.Parse([]byte(text))
	return err1 == nil && err2 == nil && value.EqualOrdered(a, b)
}
