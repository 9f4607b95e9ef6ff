package workflowcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// workflow is the part of a workflow file the checks read.
type workflow struct {
	Name string         `json:"name"`
	On   map[string]any `json:"on"`
	// YAML 1.1 (sigs.k8s.io/yaml) reads the bare key `on` as the boolean
	// true, so the trigger map may arrive under "true".
	OnAsBool    map[string]any `json:"true"`
	Permissions map[string]any `json:"permissions"`
	Concurrency any            `json:"concurrency"`
	Env         map[string]any `json:"env"`
	Defaults    map[string]any `json:"defaults"`
	Jobs        map[string]job `json:"jobs"`
}

type job struct {
	Name     string         `json:"name"`
	RunsOn   any            `json:"runs-on"`
	Strategy map[string]any `json:"strategy"`
	Timeout  int            `json:"timeout-minutes"`
	Needs    any            `json:"needs"`
	If       string         `json:"if"`
	Env      map[string]any `json:"env"`
	Steps    []step         `json:"steps"`
}

type step struct {
	Name  string            `json:"name"`
	Uses  string            `json:"uses"`
	Run   string            `json:"run"`
	Shell string            `json:"shell"`
	If    string            `json:"if"`
	With  map[string]any    `json:"with"`
	Env   map[string]string `json:"env"`
	ID    string            `json:"id"`
	// Strict decoding refuses any other key: a misspelt one (runs_on,
	// timeout-minute) fails here instead of being ignored by a reader.
	ContinueOnError  any    `json:"continue-on-error"`
	WorkingDirectory string `json:"working-directory"`
	TimeoutMinutes   int    `json:"timeout-minutes"`
}

func load(t *testing.T, name string) workflow {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "\t") {
		t.Fatalf("%s: tabs are not allowed in YAML indentation", name)
	}
	var w workflow
	if err := yaml.UnmarshalStrict(raw, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if w.On == nil {
		w.On = w.OnAsBool
	}
	checkCommon(t, name, raw, w)
	return w
}

var (
	expression = regexp.MustCompile(`\$\{\{[^{}]*\}\}`)
	usesRef    = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[A-Za-z0-9_.-]+$`)
	knownKeys  = map[string]bool{"push": true, "pull_request": true, "schedule": true, "workflow_dispatch": true}
)

// checkCommon applies what GitHub requires of every workflow, and the
// project's own rules (pinned action versions, a timeout on every job,
// read-only token).
func checkCommon(t *testing.T, name string, raw []byte, w workflow) {
	t.Helper()
	if w.Name == "" || len(w.On) == 0 || len(w.Jobs) == 0 {
		t.Fatalf("%s: needs name, on and jobs", name)
	}
	for k := range w.On {
		if !knownKeys[k] {
			t.Errorf("%s: unexpected trigger %q", name, k)
		}
	}
	if w.Permissions["contents"] != "read" || len(w.Permissions) != 1 {
		t.Errorf("%s: permissions must be exactly contents: read, got %v", name, w.Permissions)
	}
	// Every ${{ opens and closes on one line, with nothing nested.
	for i, line := range strings.Split(string(raw), "\n") {
		rest := expression.ReplaceAllString(line, "")
		if strings.Contains(rest, "${{") || strings.Contains(rest, "}}") {
			t.Errorf("%s:%d: unbalanced expression: %s", name, i+1, line)
		}
	}
	for id, j := range w.Jobs {
		if j.RunsOn == nil || len(j.Steps) == 0 {
			t.Errorf("%s: job %s needs runs-on and steps", name, id)
		}
		if j.Timeout <= 0 {
			t.Errorf("%s: job %s needs timeout-minutes", name, id)
		}
		for i, s := range j.Steps {
			if (s.Uses == "") == (s.Run == "") {
				t.Errorf("%s: job %s step %d needs exactly one of uses and run", name, id, i)
			}
			if s.Uses != "" && !usesRef.MatchString(s.Uses) {
				t.Errorf("%s: job %s step %d: %q is not owner/repo@version", name, id, i, s.Uses)
			}
		}
	}
}

// runs reports whether some step of j runs a command containing cmd.
func runs(j job, cmd string) bool {
	for _, s := range j.Steps {
		if strings.Contains(s.Run, cmd) {
			return true
		}
	}
	return false
}

// TestCIWorkflow: .ci/run on Linux and macOS, go test ./... on Windows,
// on pushes to main and on pull requests. Checked against the file
// itself: each of these fails if that job or trigger is removed.
func TestCIWorkflow(t *testing.T) {
	w := load(t, "ci.yml")
	if _, ok := w.On["push"]; !ok {
		t.Error("ci.yml: not run on push")
	}
	if _, ok := w.On["pull_request"]; !ok {
		t.Error("ci.yml: not run on pull requests")
	}
	posix, windows := false, false
	for id, j := range w.Jobs {
		var oses []string
		if m, ok := j.Strategy["matrix"].(map[string]any); ok {
			for _, o := range m["os"].([]any) {
				oses = append(oses, o.(string))
			}
		} else if s, ok := j.RunsOn.(string); ok {
			oses = []string{s}
		}
		joined := strings.Join(oses, ",")
		switch {
		case runs(j, "bash .ci/run"):
			posix = strings.Contains(joined, "ubuntu-") && strings.Contains(joined, "macos-") && !strings.Contains(joined, "windows")
			if !posix {
				t.Errorf("ci.yml: job %s runs .ci/run on %q, want Linux and macOS only", id, joined)
			}
		case runs(j, "go test ./..."):
			windows = strings.HasPrefix(joined, "windows-")
		}
		if !usesSetupGo(j) {
			t.Errorf("ci.yml: job %s does not set up Go from go.mod", id)
		}
	}
	if !posix || !windows {
		t.Errorf("ci.yml: .ci/run on Linux+macOS %v, go test on Windows %v", posix, windows)
	}
}

// TestCheckoutKeepsBytes: the windows job's checkout would turn every text
// file into CRLF (Git for Windows' core.autocrlf), and the script tests,
// golden files and fixtures compare bytes; the first rule of .gitattributes
// turns conversion off for every file. Fails if that rule is removed or
// moved below one that sets text again.
func TestCheckoutKeepsBytes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".gitattributes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if line != "* -text" {
			t.Fatalf(".gitattributes: first rule %q, want \"* -text\" (no line-ending conversion on any checkout)", line)
		}
		return
	}
	t.Fatal(".gitattributes has no rules")
}

func usesSetupGo(j job) bool {
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/setup-go@") && s.With["go-version-file"] == "go.mod" {
			return true
		}
	}
	return false
}

// cronField is one field of a five-field cron schedule.
var cronSchedule = regexp.MustCompile(`^(\*|[0-9,\-/*]+)( (\*|[0-9,\-/*]+)){4}$`)

// TestNightlyFuzzWorkflow: scheduled, runs tools/fuzzrun with a corpus
// cache that is restored before and saved after (even on failure), and
// uploads the crashers when the run fails.
func TestNightlyFuzzWorkflow(t *testing.T) {
	w := load(t, "nightly-fuzz.yml")
	sched, _ := w.On["schedule"].([]any)
	if len(sched) == 0 {
		t.Fatal("nightly-fuzz.yml: no schedule")
	}
	for _, s := range sched {
		cron, _ := s.(map[string]any)["cron"].(string)
		if !cronSchedule.MatchString(cron) {
			t.Errorf("nightly-fuzz.yml: cron %q is not five fields", cron)
		}
	}
	if len(w.Jobs) != 1 {
		t.Fatalf("nightly-fuzz.yml: %d jobs, want 1", len(w.Jobs))
	}
	for _, j := range w.Jobs {
		var restore, fuzz, save, upload = -1, -1, -1, -1
		for i, s := range j.Steps {
			switch {
			case strings.HasPrefix(s.Uses, "actions/cache/restore@") && s.With["path"] == ".fuzz-cache":
				restore = i
			case strings.Contains(s.Run, "go run ./tools/fuzzrun") && strings.Contains(s.Run, "-cache .fuzz-cache") &&
				strings.Contains(s.Run, "-crashers .fuzz-crashers"):
				fuzz = i
				if strings.Contains(s.Run, "|") && s.Shell != "bash" {
					t.Error("nightly-fuzz.yml: a pipe without shell: bash (pipefail) hides fuzzrun's exit status")
				}
			case strings.HasPrefix(s.Uses, "actions/cache/save@") && s.With["path"] == ".fuzz-cache" && s.If == "always()":
				save = i
			case strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.Contains(s.With["path"].(string), ".fuzz-crashers") &&
				s.If == "failure()":
				upload = i
			}
		}
		if !(restore >= 0 && restore < fuzz && fuzz < save && fuzz < upload) {
			t.Errorf("nightly-fuzz.yml: steps restore %d, fuzz %d, save %d, upload %d: want restore < fuzz < save, upload", restore, fuzz, save, upload)
		}
	}
}
