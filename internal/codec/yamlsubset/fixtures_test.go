package yamlsubset_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
)

// recordedStep is the subset of a fixture step these tests read.
type recordedStep struct {
	Kind       string   `json:"kind"`
	Args       []string `json:"args"`
	Stdout     string   `json:"stdout"`
	StateAfter *string  `json:"state_after"`
	Path       string   `json:"path"`
	ContentB64 string   `json:"content_b64"`
}

type recording struct {
	State string         `json:"state"`
	Steps []recordedStep `json:"steps"`
}

// engineWritten lists, for each run step, whether state_after holds text
// the engine wrote (not a file a write step planted and no run rewrote).
func (r recording) engineWritten() []bool {
	out := make([]bool, len(r.Steps))
	planted := ""
	for i, st := range r.Steps {
		switch st.Kind {
		case "write":
			if st.Path == r.State {
				b, _ := base64.StdEncoding.DecodeString(st.ContentB64)
				planted = string(b)
			}
		case "run":
			out[i] = st.StateAfter != nil && *st.StateAfter != planted
		}
	}
	return out
}

// loadRecordings returns every recorded run of the reference engine
// (shared, read-only; see internal/testsupport/testfixtures) by its path relative to the
// sweep fixtures folder.
func loadRecordings(t testing.TB) map[string]recording {
	t.Helper()
	dir := testfixtures.Dir(t, "sweep") // skips or fails when missing
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		// The folder exists, so recordings that vanished are a defect.
		t.Fatalf("no recordings in %s", dir)
	}
	out := map[string]recording{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r recording
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		out[rel] = r
	}
	return out
}

// engineRules are the engine's load rules, which the fast paths are given
// as the engine gives them.
var engineRules = sweeprules.StateLoad()
