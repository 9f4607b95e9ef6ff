package sweepengine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
)

// FuzzTypedUpsert gives any bytes to the Go API's UpsertItem as a
// json.RawMessage and the same bytes to the command line's --json, each on
// its own copy of a file whose lease the caller holds. Oracles: the typed
// call answers OK or ERROR wrapping ErrInvalidCommand, and then leaves its
// file byte for byte; when it answers OK the command line does too and the
// two files are equal byte for byte (the typed path, through
// encoding/json's Marshal, changes no value the command line's decoder
// reads); it refuses only text encoding/json does not accept or the
// command line refuses too.
func FuzzTypedUpsert(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"status": "closed", "fix_ref": "PR#1", "verified_at": "x", "verified_revision_id": "r"}`,
		`{"sensitive": true, "body": "SECRET", "title": "t"}`, `{"a": 1, "a": 2}`,
		`{"n": 1180591620717411303424, "f": 1.0, "e": 1E+2, "z": -0, "t": 1e-7}`,
		`{"x": "<b> & \u2028 \ud800 \ud83d\ude00"}`, ` {"x": [1, {"y": null}]} `,
		`[1]`, `5`, `null`, `{"x": NaN}`, `{"x": 1e999}`, `{"a": 1,}`, "{\"a\": \"\xff\"}", "",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	now := time.Date(2026, 7, 2, 12, 1, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string, existing bool) {
		dir := t.TempDir()
		typed, byCLI := filepath.Join(dir, "typed.yml"), filepath.Join(dir, "cli.yml")
		for _, p := range []string{typed, byCLI} {
			if err := os.WriteFile(p, []byte(heldState), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		id := "new"
		if existing {
			id = "9"
		}
		res := (&sweepstate.Engine{}).Run(typed, sweepstate.UpsertItem{Source: "gh", ID: id, Writer: "w1", Now: now,
			Fields: json.RawMessage(text)})
		rc, stdout, _ := runCLI(argv("upsert-item", byCLI, flag("source", "gh"), flag("id", id), flag("writer", "w1"),
			flag("now", "2026-07-02T12:01:00+00:00"), flag("json", text)))
		typedFile, err := os.ReadFile(typed)
		if err != nil {
			t.Fatal(err)
		}
		switch res.Word {
		case sweepstate.WordOK:
			cliFile, err := os.ReadFile(byCLI)
			if err != nil {
				t.Fatal(err)
			}
			if rc != 0 || stdout != "OK\n" || string(cliFile) != string(typedFile) {
				t.Fatalf("--json %q: typed OK, the CLI exit %d %q; files equal: %v\ntyped:\n%s\nCLI:\n%s", text, rc, stdout, string(cliFile) == string(typedFile), typedFile, cliFile)
			}
		case sweepstate.WordError:
			if !errors.Is(res.Err, sweepstate.ErrInvalidCommand) || string(typedFile) != heldState {
				t.Fatalf("--json %q: typed ERROR %v, file changed: %v", text, res.Err, string(typedFile) != heldState)
			}
			if json.Valid([]byte(text)) && stdout == "OK\n" {
				t.Fatalf("--json %q: typed refused (%s) what encoding/json accepts and the CLI merged", text, res.Reason)
			}
		default:
			t.Fatalf("--json %q: typed answered %s (%s)", text, res.Word, res.Reason)
		}
	})
}
