package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// The recordings (spec/testdata/fixtures, README there) are the Python
// tools' own answers: every call of every recording is replayed through
// the new command in a fresh directory and compared with what the Python
// tool answered, as a third opponent that needs no Python here.

// recordedStep is one step of a recording, either side's shape: a sweep
// step (kind, args, rc, stdout, state_after; or a write, rm, mkdir) or a
// ledger step (argv with <db>, rc, stdout, bytes_unchanged, sidecars_after,
// mode_after).
type recordedStep struct {
	Kind           string   `json:"kind"`
	Args           []string `json:"args"`
	RC             int      `json:"rc"`
	Stdout         string   `json:"stdout"`
	StateAfter     *string  `json:"state_after"`
	Path           string   `json:"path"`
	ContentB64     string   `json:"content_b64"`
	Argv           []string `json:"argv"`
	BytesUnchanged bool     `json:"bytes_unchanged"`
	SidecarsAfter  []string `json:"sidecars_after"`
	ModeAfter      string   `json:"mode_after"`
}

// recording is one replayable unit: a sweep file, or one run of a ledger
// file (each run starts from a fresh copy of the ledger).
type recording struct {
	name  string // relative to the fixtures folder, with the run for a ledger
	state string // sweep: the state file's path in the directory
	steps []recordedStep
	db    []byte // ledger: the recorded database
	// divergences apply by name to this recording's differences.
	divergences []divergence
}

// recordingNow pins the test clock for the ledger's recorded dry runs: the
// reference used the wall clock, and the fixtures README guarantees its
// counts for any time from 2001 to 2317; this is 2023-11-14.
const recordingNow = "1700000000"

// recordingDivergences are the declared divergences a recording can meet
// besides those of the generated sequences: D8 (the recorded state_after
// is D8-normalised, so where the call did not write, the file the
// recording put there, as the Python engine wrote it, is still in its raw
// form) and L5 (the doctor opens read-only and reports what the
// reference's read-only API reported).
var recordingDivergences = map[string][]divergence{
	"sweep": append(append([]divergence{}, sweepDivergences...), divergence{"D8", sweepSpec, "15.1.2", func(s step, before, old, new outcome) bool {
		if old.code != new.code || old.stdout != new.stdout || !new.exists || new.files != before.files {
			return false
		}
		got, err1 := yamlsubset.ParseString(new.files)
		want, err2 := yamlsubset.ParseString(old.files)
		return err1 == nil && err2 == nil && value.EqualOrdered(got, want)
	}}),
	"ledger": {{"L5", ledgerSpec, "8.6", nil}}, // its test is made per recording
}

// loadRecordings reads every recording of the engine under dir.
func loadRecordings(engineName, dir string) ([]recording, error) {
	if engineName == "sweep" {
		return loadSweepRecordings(filepath.Join(dir, "sweep"))
	}
	return loadLedgerRecordings(filepath.Join(dir, "ledger"))
}

func loadSweepRecordings(dir string) ([]recording, error) {
	var out []recording
	for _, family := range []string{"edge", "sequences", "python-written"} {
		files, err := filepath.Glob(filepath.Join(dir, family, "*.json"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			var fx struct {
				State string         `json:"state"`
				Steps []recordedStep `json:"steps"`
			}
			if err := readJSON(f, &fx); err != nil {
				return nil, err
			}
			out = append(out, recording{
				name: "sweep/" + family + "/" + filepath.Base(f), state: fx.State, steps: fx.Steps,
				divergences: recordingDivergences["sweep"],
			})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sweep recordings under %s", dir)
	}
	return out, nil
}

func loadLedgerRecordings(dir string) ([]recording, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.expected.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []recording
	for _, f := range files {
		var fx struct {
			File       string            `json:"file"`
			SchemaMeta map[string]string `json:"schema_meta"`
			Runs       []struct {
				About string         `json:"about"`
				Steps []recordedStep `json:"steps"`
			} `json:"runs"`
			ReadOnly struct {
				OK     bool   `json:"ok"`
				Report string `json:"report"`
			} `json:"api_read_only_doctor"`
		}
		if err := readJSON(f, &fx); err != nil {
			return nil, err
		}
		db, err := os.ReadFile(filepath.Join(dir, fx.File))
		if err != nil {
			return nil, err
		}
		reply := earlyReturnReport(fx.SchemaMeta["schema_version"])
		if fx.ReadOnly.OK {
			reply = fx.ReadOnly.Report + "\n"
		}
		reply = hereModel(reply)
		l5 := divergence{"L5", ledgerSpec, "8.6", func(s step, before, old, new outcome) bool {
			// The doctor reports read-only where the reference's opened
			// for writing (and refused, or migrated first).
			return subcommand(s.args) == "doctor" && new.code == 1 && strings.HasPrefix(new.files, "bytes unchanged") &&
				new.stdout == reply
		}}
		for i, r := range fx.Runs {
			out = append(out, recording{name: fmt.Sprintf("ledger/%s run %d (%s)", fx.File, i+1, r.About),
				steps: r.Steps, db: db, divergences: []divergence{l5}})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ledger recordings under %s", dir)
	}
	return out, nil
}

// earlyReturnReport is the doctor's report on a schema that is not
// exactly right (spec/task-state-guard.md 8.5), where the reference's
// read-only API refused instead of reporting.
func earlyReturnReport(version string) string {
	return `{"delivery_status_counts":{"delivered":0,"failed":0,"not_applicable":0,"pending":0},` +
		`"doctor_error_count":1,"event_count":0,"event_inconsistency_count":0,"foreign_key_error_count":0,` +
		`"healthy":false,"orphan_count":0,"parent_cycle_count":0,"quick_check":"ok","schema_ok":false,` +
		`"schema_version":` + version + `,"state_inconsistency_count":0,"task_count":0,` +
		`"task_status_counts":{"cancelled":0,"failed":0,"queued":0,"running":0,"succeeded":0,"timed_out":0},` +
		`"timestamp_inconsistency_count":0}` + "\n"
}

// hereModel puts this platform's permission model where a recording made
// on Linux has the POSIX one.
func hereModel(recorded string) string {
	if runtime.GOOS != "windows" {
		return recorded
	}
	return strings.ReplaceAll(recorded, `"permission_model":"posix_mode"`, `"permission_model":"external_acl"`)
}

func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// replayDifference is where a recording's replay first differs from the
// recording, outside its declared divergences.
type replayDifference struct {
	at            int // index into the recording's steps
	recorded, got outcome
}

// replayRecording runs the recording's calls through program in a fresh
// directory. It returns the declared divergence that ended the comparison
// ("" for none), or the first other difference (nil for none).
func replayRecording(engineName string, program []string, rec recording) (string, *replayDifference, error) {
	dir, err := os.MkdirTemp("", "equivalence-recording-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir)
	if engineName == "ledger" {
		return replayLedgerRecording(program, rec, dir)
	}
	return replaySweepRecording(program, rec, dir)
}

func replaySweepRecording(program []string, rec recording, dir string) (string, *replayDifference, error) {
	statePath := filepath.Join(dir, filepath.FromSlash(rec.state))
	stateNow := func() (outcome, error) {
		text, err := os.ReadFile(statePath)
		if errors.Is(err, os.ErrNotExist) {
			return outcome{}, nil
		}
		return outcome{exists: true, files: string(text)}, err
	}
	for i, st := range rec.steps {
		switch st.Kind {
		case "write":
			data, err := base64.StdEncoding.DecodeString(st.ContentB64)
			if err != nil {
				return "", nil, fmt.Errorf("%s: %w", rec.name, err)
			}
			p := filepath.Join(dir, filepath.FromSlash(st.Path))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return "", nil, err
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				return "", nil, err
			}
		case "rm":
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(st.Path))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", nil, err
			}
		case "mkdir":
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(st.Path)), 0o700); err != nil {
				return "", nil, err
			}
		case "run":
			before, err := stateNow()
			if err != nil {
				return "", nil, err
			}
			code, stdout, err := runCall(program, st.Args, dir, nil)
			if err != nil {
				return "", nil, err
			}
			got, err := stateNow()
			if err != nil {
				return "", nil, err
			}
			got.code, got.stdout = code, stdout
			recorded := outcome{code: st.RC, stdout: st.Stdout, exists: st.StateAfter != nil}
			if st.StateAfter != nil {
				recorded.files = *st.StateAfter
			}
			if got == recorded {
				continue
			}
			if d := explain(rec.divergences, step{args: st.Args}, before, recorded, got); d != "" {
				return d, nil, nil
			}
			return "", &replayDifference{i, recorded, got}, nil
		default:
			return "", nil, fmt.Errorf("%s: unknown step kind %q", rec.name, st.Kind)
		}
	}
	return "", nil, nil
}

// The ledger's copy is made as the fixtures README says: a private
// directory, the file 0600.
func replayLedgerRecording(program []string, rec recording, dir string) (string, *replayDifference, error) {
	private := filepath.Join(dir, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		return "", nil, err
	}
	db := filepath.Join(private, "tasks.sqlite")
	if err := os.WriteFile(db, rec.db, 0o600); err != nil {
		return "", nil, err
	}
	env := []string{testClockEnv + "=1", testNowEnv + "=" + recordingNow}
	for i, st := range rec.steps {
		args := make([]string, 0, len(st.Argv)+1)
		if runtime.GOOS == "windows" {
			args = append(args, "--allow-external-acl")
		}
		for _, a := range st.Argv {
			args = append(args, strings.ReplaceAll(a, "<db>", filepath.Join("private", "tasks.sqlite")))
		}
		before, err := os.ReadFile(db)
		if err != nil {
			return "", nil, err
		}
		code, stdout, err := runCall(program, args, dir, env)
		if err != nil {
			return "", nil, err
		}
		after, err := os.ReadFile(db)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", nil, err
		}
		got := outcome{code: code, stdout: stdout, exists: err == nil, files: ledgerFileFacts(db, bytes.Equal(before, after))}
		recorded := outcome{code: st.RC, stdout: hereModel(st.Stdout), exists: true,
			files: recordedFileFacts(st.BytesUnchanged, st.SidecarsAfter, st.ModeAfter)}
		if got == recorded {
			continue
		}
		beforeOutcome := outcome{exists: true, files: recordedFileFacts(true, nil, "0o600")}
		if d := explain(rec.divergences, step{args: args}, beforeOutcome, recorded, got); d != "" {
			return d, nil, nil
		}
		return "", &replayDifference{i, recorded, got}, nil
	}
	return "", nil, nil
}

// ledgerFileFacts is what the recordings say of the ledger's file after a
// call: whether its bytes changed, its sidecars and (where files have
// POSIX modes) its mode.
func ledgerFileFacts(db string, unchanged bool) string {
	var sidecars []string
	for _, suffix := range []string{"-journal", "-shm", "-wal"} {
		if _, err := os.Lstat(db + suffix); err == nil {
			sidecars = append(sidecars, filepath.Base(db)+suffix)
		}
	}
	mode := ""
	if st, err := os.Stat(db); err == nil {
		mode = fmt.Sprintf("%#o", st.Mode().Perm())
	}
	return fileFacts(unchanged, sidecars, mode)
}

func recordedFileFacts(unchanged bool, sidecars []string, mode string) string {
	renamed := make([]string, len(sidecars))
	for i, s := range sidecars {
		// The recordings name the sidecars after their own copy.
		renamed[i] = "tasks.sqlite" + s[strings.LastIndexByte(s, '-'):]
	}
	return fileFacts(unchanged, renamed, strings.Replace(mode, "0o", "0", 1))
}

func fileFacts(unchanged bool, sidecars []string, mode string) string {
	facts := "bytes changed"
	if unchanged {
		facts = "bytes unchanged"
	}
	sort.Strings(sidecars)
	facts += "; sidecars [" + strings.Join(sidecars, " ") + "]"
	if runtime.GOOS != "windows" {
		facts += "; mode " + mode
	}
	return facts
}

// recordingsResult is one engine's tally of its recordings.
type recordingsResult struct {
	replayed, differences int
	declared              map[string]int
}

// checkRecordings replays every recording of the engine under dir through
// program and prints each difference with its reproduction.
func checkRecordings(e engine, program []string, dir string, jobs int, w io.Writer) (recordingsResult, error) {
	recs, err := loadRecordings(e.name, dir)
	if err != nil {
		return recordingsResult{}, err
	}
	type answer struct {
		declared string
		diff     *replayDifference
		err      error
	}
	answers := make([]answer, len(recs))
	parallel(len(recs), jobs, func(i int) {
		d, diff, err := replayRecording(e.name, program, recs[i])
		answers[i] = answer{d, diff, err}
	})
	res := recordingsResult{replayed: len(recs), declared: map[string]int{}}
	for i, a := range answers {
		if a.err != nil {
			return res, a.err
		}
		if a.declared != "" {
			res.declared[a.declared]++
		}
		if a.diff == nil {
			continue
		}
		res.differences++
		printRecordingDifference(w, e, recs[i], a.diff)
	}
	return res, nil
}

func printRecordingDifference(w io.Writer, e engine, rec recording, d *replayDifference) {
	var what []string
	if d.recorded.code != d.got.code {
		what = append(what, fmt.Sprintf("exit %d, recorded %d", d.got.code, d.recorded.code))
	}
	if d.recorded.stdout != d.got.stdout {
		what = append(what, fmt.Sprintf("stdout %s, recorded %s", clip(d.got.stdout), clip(d.recorded.stdout)))
	}
	if d.recorded.exists != d.got.exists || d.recorded.files != d.got.files {
		if e.name == "ledger" {
			what = append(what, fmt.Sprintf("file %s, recorded %s", d.got.files, d.recorded.files))
		} else {
			what = append(what, fmt.Sprintf("%s %s, recorded %s", rec.state, fileText(d.got), fileText(d.recorded)))
		}
	}
	fmt.Fprintf(w, "%s recording %s differs from the recording at its call %d: %s; reproduction, in an empty directory:\n",
		e.name, rec.name, d.at+1, strings.Join(what, "; "))
	for _, st := range rec.steps[:d.at+1] {
		switch {
		case st.Kind == "write":
			fmt.Fprintf(w, "  (write %s as the recording holds it)\n", st.Path)
		case st.Kind == "rm":
			fmt.Fprintf(w, "  rm -f %s\n", shellWords([]string{st.Path}))
		case st.Kind == "mkdir":
			fmt.Fprintf(w, "  mkdir -p %s\n", shellWords([]string{st.Path}))
		case e.name == "ledger":
			args := make([]string, len(st.Argv))
			for i, a := range st.Argv {
				args[i] = strings.ReplaceAll(a, "<db>", "tasks.sqlite")
			}
			fmt.Fprintf(w, "  %s=1 %s=%s PROGRAM %s\n", testClockEnv, testNowEnv, recordingNow, shellWords(args))
		default:
			fmt.Fprintf(w, "  PROGRAM %s\n", shellWords(st.Args))
		}
	}
	if e.name == "ledger" {
		fmt.Fprintf(w, "  (tasks.sqlite: a 0600 copy of %s)\n", strings.SplitN(strings.TrimPrefix(rec.name, "ledger/"), " ", 2)[0])
	}
}

func fileText(o outcome) string {
	if !o.exists {
		return "absent"
	}
	return clip(o.files)
}

// clip quotes text for a one-line report, cut in the middle when long.
func clip(text string) string {
	const max = 160
	if len(text) <= max {
		return fmt.Sprintf("%q", text)
	}
	return fmt.Sprintf("%q...%q", text[:max/2], text[len(text)-max/2:])
}

func (r recordingsResult) line(e engine) string {
	names := make([]string, 0, len(r.declared))
	for _, d := range recordingDivergences[e.name] {
		names = append(names, fmt.Sprintf("%s %d", d.name, r.declared[d.name]))
	}
	return fmt.Sprintf("%s: %d/%d recordings of the Python tool replayed as recorded; ended by a declared divergence: %s",
		e.name, r.replayed-r.differences, r.replayed, strings.Join(names, ", "))
}
