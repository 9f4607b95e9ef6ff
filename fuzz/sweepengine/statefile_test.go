package sweepengine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// fileOps are the subcommands FuzzStateFile runs on a hand-edited file,
// each with its argv tail and the model's command.
var fileOps = []struct {
	args []string
	cmd  sweep.Command
}{
	{[]string{"read"}, sweep.Read{}},
	{[]string{"validate"}, sweep.Validate{}},
	{[]string{"cursor-get", "--source", "gh"}, sweep.CursorGet{Source: "gh"}},
	{[]string{"lease-acquire", "--writer", "w2", "--now", fileNow, "--ttl-minutes", "5"},
		sweep.LeaseAcquire{Writer: "w2", Now: fileNow, TTLMinutes: value.Int(5)}},
	{[]string{"lease-acquire", "--writer", "w1", "--now", fileNow}, sweep.LeaseAcquire{Writer: "w1", Now: fileNow}},
	{[]string{"lease-release", "--writer", "w1"}, sweep.LeaseRelease{Writer: "w1"}},
	{[]string{"upsert-item", "--source", "gh", "--id", "9", "--json", `{"status": "closed", "body": "b"}`, "--writer", "w1", "--now", fileNow},
		sweep.UpsertItem{Source: "gh", ID: "9", Writer: "w1", Now: fileNow, Item: decodeJSON(`{"status": "closed", "body": "b"}`)}},
	{[]string{"cursor-advance", "--source", "gh", "--to", "10", "--past-item", "9", "--writer", "w1", "--now", fileNow},
		sweep.CursorAdvance{Source: "gh", To: "10", PastItem: "9", Writer: "w1", Now: fileNow}},
	{[]string{"run-record", "--writer", "w1", "--outcome", "partial", "--counts", `{"n": 1}`, "--timestamp", "t"},
		sweep.RunRecord{Writer: "w1", Outcome: "partial", Timestamp: "t", Counts: decodeJSON(`{"n": 1}`)}},
	{[]string{"import-legacy", "--file", "legacy.json"}, sweep.ImportLegacy{Legacy: decodeLegacy([]byte(legacyText))}},
}

const (
	fileNow    = "2026-07-02T12:30:00Z"
	legacyText = `{"channels": {"gh": {"cursor": "12"}}, "items": {"gh:12": {"status": "ingested"}}}`
)

// pastMtime marks the file so that any rewrite, even of the same bytes, shows.
var pastMtime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// FuzzStateFile puts any bytes in the state file and runs one subcommand.
// Oracle: the answer equals the model's on the parsed document; when the
// model writes nothing (CORRUPT among them), the file keeps its bytes,
// mode and mtime; when it writes, the file holds the model's document; the
// directory holds nothing but the state file, its lock and the legacy file.
func FuzzStateFile(f *testing.F) {
	for _, s := range []string{
		"", " \n\t", "\u2028\x1c", "schema_version: 1\n", "schema_version: 1\nthis line has no colon\n",
		"sources: {}\n", "schema_version: 1\nitems: 5\n", "schema_version: 1\nitems:\n\tx: 1\n",
		"schema_version: 3\nlease:\n  writer: \"w1\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: \"\u0663\u0660\"\nitems:\n  \"gh:9\":\n    status: \"closed\"\n    verified_merge_sha: \"abc\"\n    fix_ref: 0\n",
		"schema_version: 1\nlease:\n  writer: \"w2\"\n  timestamp: \"2026-07-02T12:29:00+00:00\"\n  ttl_minutes: 1.5\nsources:\n  gh: \"flat\"\n",
		"schema_version: 1\nlease: {\"writer\": \"w1\", \"timestamp\": \"2026-07-02\", \"ttl_minutes\": 60}\nsources: {\"gh\": {\"cursor\": 11, \"sensitive\": true}}\n",
		"schema_version: 1\nx: \xff\n", "schema_version: yes\nitems: {}\n",
		// Hand-edited sources: not a map, and an entry that is not one.
		"schema_version: 1\nlease:\n  writer: \"w1\"\n  timestamp: \"2026-07-02T12:00:00Z\"\nsources: 5\nitems:\n  \"gh:9\": {}\n",
		"schema_version: 1\nlease:\n  writer: \"w1\"\n  timestamp: \"2026-07-02T12:00:00Z\"\nsources:\n  gh: 7\nitems:\n  \"gh:9\": {}\n",
	} {
		for op := range fileOps {
			f.Add([]byte(s), uint8(op))
		}
	}
	f.Fuzz(func(t *testing.T, file []byte, op uint8) {
		o := fileOps[int(op)%len(fileOps)]
		dir := t.TempDir()
		state := handEdited(t, dir, file)
		mustWrite(t, filepath.Join(dir, "legacy.json"), []byte(legacyText))
		a := append([]string{o.args[0], "--state", state}, o.args[1:]...)
		for i := range a {
			if a[i] == "legacy.json" {
				a[i] = filepath.Join(dir, "legacy.json")
			}
		}
		rc, stdout, stderr := runCLI(a)
		res, next := sweep.Apply(stateOf(file, true), o.cmd)
		if rc != 0 || stdout != answer(res) {
			t.Fatalf("%s on %q: exit %d stdout %q stderr %q; model %q", o.args[0], file, rc, stdout, stderr, answer(res))
		}
		if (res.Word == sweep.Error) != (stderr != "") {
			t.Fatalf("%s on %q: %s with stderr %q", o.args[0], file, res.Word, stderr)
		}
		if !res.Wrote {
			if err := checkKept(state, file); err != nil {
				t.Fatalf("%s on %q (%s, nothing to write): %v", o.args[0], file, res.Word, err)
			}
		} else if err := checkWritten(state, next, file); err != nil {
			t.Fatalf("%s on %q: %v", o.args[0], file, err)
		}
		var names []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			if n != "legacy.json" && n != "state.yml" && n != "state.yml.lock" {
				t.Fatalf("%s on %q: left %q in the directory", o.args[0], file, names)
			}
		}
	})
}

// handEditedMode is not 0600, the mode every write leaves, so that a call
// that changes the mode of a file it must keep shows.
const handEditedMode = 0o640

// handEdited writes file as dir's state file, as a user's editor would
// leave it, and returns its path.
func handEdited(t *testing.T, dir string, file []byte) string {
	t.Helper()
	state := filepath.Join(dir, "state.yml")
	mustWrite(t, state, file)
	if err := os.Chmod(state, handEditedMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(state, pastMtime, pastMtime); err != nil {
		t.Fatal(err)
	}
	return state
}

// checkKept: a call that writes nothing leaves the file's bytes, mode and
// mtime as handEdited made them.
func checkKept(state string, file []byte) error {
	fi, err := os.Stat(state)
	if err != nil {
		return fmt.Errorf("state file gone: %v", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != handEditedMode {
		return fmt.Errorf("mode %v, was %v", fi.Mode().Perm(), os.FileMode(handEditedMode))
	}
	got, _ := os.ReadFile(state)
	if !bytes.Equal(got, file) || !fi.ModTime().Equal(pastMtime) {
		return fmt.Errorf("file now %q, mtime %v", got, fi.ModTime())
	}
	return nil
}

// checkWritten: a call that writes leaves a 0600 file holding the model's
// document (spec/sweep-state.md 13.4).
func checkWritten(state string, next sweep.State, file []byte) error {
	fi, err := os.Stat(state)
	if err != nil {
		return fmt.Errorf("state file gone: %v", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		return fmt.Errorf("mode %v", fi.Mode().Perm())
	}
	return checkFile(state, next, file)
}
