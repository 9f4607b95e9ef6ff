// Package journal is the file format shared by tools/planrun and the crash
// tests that read what it wrote: the plan it runs and the journal it keeps.
package journal

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Plan is planrun's input.
type Plan struct {
	Steps []Step `json:"steps"`
}

// Step is one call: argv (argv[0] a path) run with Env added to the
// environment. Snapshot, when set, copies a file before the call; Hash,
// when set, names the file whose SHA-256 the end line records.
type Step struct {
	Argv     []string  `json:"argv"`
	Env      []string  `json:"env,omitempty"`
	Snapshot *Snapshot `json:"snapshot,omitempty"`
	Hash     string    `json:"hash,omitempty"`
}

// Snapshot asks for a whole copy of From at To before the call.
type Snapshot struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Absent is what a snapshot of a missing file holds, and AbsentHash the
// hash recorded for a missing file.
const (
	Absent     = "ABSENT\n"
	AbsentHash = "absent"
)

// End is one returned call.
type End struct {
	ExitStatus int
	Hash       string // "-" when the step asked for none
	Stdout     string
}

// Journal is what a (possibly killed) run left: the calls that returned,
// in order, and the call that had begun without returning (-1 if none).
type Journal struct {
	Ended    []End
	InFlight int
}

// BeginLine and EndLine are the two line forms.
func BeginLine(i int) string { return fmt.Sprintf("B %d\n", i) }

// EndLine is the line written after call i returned.
func EndLine(i int, e End) string {
	return fmt.Sprintf("E %d %d %s %s\n", i, e.ExitStatus, e.Hash, base64.StdEncoding.EncodeToString([]byte(e.Stdout)))
}

// Parse reads a journal. Lines must come in order: B i, E i, B i+1, ...
// A last line without its newline was cut short by the kill (a write to a
// regular file stops early when a fatal signal is pending) and is
// ignored: a cut "E i" leaves call i in flight, which it was as far as
// anyone could tell; a cut "B i" means call i never started.
func Parse(text string) (Journal, error) {
	j := Journal{InFlight: -1}
	if i := strings.LastIndexByte(text, '\n'); i+1 < len(text) {
		text = text[:i+1]
	}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case line == "":
		case len(f) == 2 && f[0] == "B":
			i, err := strconv.Atoi(f[1])
			if err != nil || i != len(j.Ended) || j.InFlight != -1 {
				return j, fmt.Errorf("journal: out of order at %q", line)
			}
			j.InFlight = i
		case (len(f) == 4 || len(f) == 5) && f[0] == "E":
			i, err1 := strconv.Atoi(f[1])
			rc, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil || i != j.InFlight {
				return j, fmt.Errorf("journal: out of order at %q", line)
			}
			var out []byte
			if len(f) == 5 {
				var err error
				if out, err = base64.StdEncoding.DecodeString(f[4]); err != nil {
					return j, fmt.Errorf("journal: %q: %v", line, err)
				}
			}
			j.Ended = append(j.Ended, End{ExitStatus: rc, Hash: f[3], Stdout: string(out)})
			j.InFlight = -1
		default:
			return j, fmt.Errorf("journal: bad line %q", line)
		}
	}
	return j, nil
}
