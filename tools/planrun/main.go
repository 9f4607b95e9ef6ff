// Command planrun runs a plan of command lines one after another and
// journals each call before it starts and after it returns. The crash
// tests of both engines build it, start it in a process group of its own
// and SIGKILL the group at a random moment; the journal then tells which
// call was in flight.
//
//	planrun PLAN.json JOURNAL
//
// PLAN is {"steps": [{"argv": [...], "env": [...], "snapshot": {"from":
// F, "to": T}, "hash": H}, ...]}. For each step planrun
//
//  1. copies the file F to T when a snapshot is asked for (through a
//     temporary file and a rename, so T is always whole; a missing F
//     leaves T holding the single line "ABSENT"),
//  2. appends "B <i>" to the journal,
//  3. runs argv (argv[0] is a path) with env added to its environment,
//  4. appends "E <i> <exit status> <sha256 of H, or -> <stdout as base64>".
//
// The journal is written with one write per line and no buffering, so a
// kill never loses a line that planrun finished writing.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"

	"github.com/stateguard/stateguard/tools/planrun/journal"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: planrun PLAN.json JOURNAL")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "planrun:", err)
		os.Exit(1)
	}
}

func run(planPath, journalPath string) error {
	data, err := os.ReadFile(planPath)
	if err != nil {
		return err
	}
	var plan journal.Plan
	if err := json.Unmarshal(data, &plan); err != nil {
		return err
	}
	jf, err := os.OpenFile(journalPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer jf.Close()
	for i, st := range plan.Steps {
		if st.Snapshot != nil {
			if err := snapshot(st.Snapshot.From, st.Snapshot.To); err != nil {
				return err
			}
		}
		if _, err := jf.WriteString(journal.BeginLine(i)); err != nil {
			return err
		}
		cmd := exec.Command(st.Argv[0], st.Argv[1:]...)
		cmd.Env = append(os.Environ(), st.Env...)
		out, err := cmd.Output()
		rc := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			rc = exit.ExitCode()
		} else if err != nil {
			return err
		}
		sum := "-"
		if st.Hash != "" {
			sum = hashFile(st.Hash)
		}
		line := journal.EndLine(i, journal.End{ExitStatus: rc, Hash: sum, Stdout: string(out)})
		if _, err := jf.WriteString(line); err != nil {
			return err
		}
	}
	return nil
}

// hashFile is the hex SHA-256 of the file at p, or "absent".
func hashFile(p string) string {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return journal.AbsentHash
	}
	if err != nil {
		return "unreadable"
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func snapshot(from, to string) error {
	b, err := os.ReadFile(from)
	if errors.Is(err, fs.ErrNotExist) {
		b = []byte(journal.Absent)
	} else if err != nil {
		return err
	}
	tmp := to + ".part"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, to)
}
