package sweepengine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// runCLI runs the command line in-process.
func runCLI(argv []string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	rc := sweepcli.Main(argv, &stdout, &stderr)
	return rc, stdout.String(), stderr.String()
}

// answer is the stdout the model says the CLI prints for res.
func answer(res sweep.Result) string {
	s := res.Word + "\n"
	if res.Payload != nil {
		s += string(pyjson.Encode(res.Payload)) + "\n"
	}
	return s
}

// flag renders --name value, or --name=value when the value would read as
// an option (argparse would refuse it as a separate token).
func flag(name, val string) []string {
	if strings.HasPrefix(val, "-") {
		return []string{"--" + name + "=" + val}
	}
	return []string{"--" + name, val}
}

func argv(sub, state string, flags ...[]string) []string {
	out := []string{sub, "--state", state}
	for _, f := range flags {
		out = append(out, f...)
	}
	return out
}

// isPySpace is Python's str.isspace, which the reference's strip() uses to
// call a file blank: Unicode white space plus the four ASCII separators.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// stateOf is the model's view of a file's bytes (exists false: no file).
// The document comes from the YAML-subset codec, which fuzz/codec checks
// on its own; everything the engine decides on top of it is compared here.
func stateOf(b []byte, exists bool) sweep.State {
	switch {
	case !exists:
		return sweep.State{Kind: sweep.Absent}
	case !utf8.Valid(b):
		return sweep.State{Kind: sweep.Unreadable}
	case strings.TrimFunc(string(b), isPySpace) == "":
		return sweep.State{Kind: sweep.Blank}
	}
	doc, err := yamlsubset.Parse(b)
	if err != nil {
		return sweep.State{Kind: sweep.Unreadable}
	}
	return sweep.State{Kind: sweep.Parsed, Doc: doc}
}

// checkFile compares the file at path with the model's next state: for
// Absent no file, for Blank and Unreadable the bytes before (raw) kept,
// for Parsed a document equal, in order, to the model's.
func checkFile(path string, want sweep.State, raw []byte) error {
	b, err := os.ReadFile(path)
	exists := err == nil
	switch want.Kind {
	case sweep.Absent:
		if exists {
			return fmt.Errorf("model says no file, the engine left %q", b)
		}
		return nil
	case sweep.Blank, sweep.Unreadable:
		if !bytes.Equal(b, raw) {
			return fmt.Errorf("file bytes changed: got %q, want %q", b, raw)
		}
		return nil
	}
	if !exists {
		return fmt.Errorf("model has a document, the file is missing: %v", err)
	}
	doc, err := yamlsubset.Parse(b)
	if err != nil {
		return fmt.Errorf("written file does not parse (%v):\n%s", err, b)
	}
	if !value.EqualOrdered(doc, want.Doc) {
		return fmt.Errorf("file content\n got %s\nwant %s\nfile:\n%s", pyjson.Encode(doc), pyjson.Encode(want.Doc), b)
	}
	return nil
}

func quoteArgv(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " ")
}

// decodeLegacy reads a legacy file as the engine's contract says: JSON,
// or else the YAML subset.
func decodeLegacy(b []byte) sweep.Decoded {
	if v, err := pyjson.Decode(string(b)); err == nil {
		return sweep.Decoded{Value: v, OK: true}
	}
	if doc, err := yamlsubset.Parse(b); err == nil {
		return sweep.Decoded{Value: doc, OK: true}
	}
	return sweep.Decoded{}
}

// decodeJSON is a --json, --counts or --source-map argument as the model
// receives it: not OK when it does not decode or holds a non-finite number.
func decodeJSON(text string) sweep.Decoded {
	v, err := pyjson.Decode(text)
	if err != nil {
		return sweep.Decoded{}
	}
	return sweep.Decoded{Value: v, OK: true}
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
