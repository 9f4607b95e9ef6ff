// Package ledgercli fuzzes the task-state-guard command line, the trust
// boundary where arbitrary argv meets the ledger.
//
//	go test ./fuzz/ledgercli                       # seed corpus only (fast)
//	go test ./fuzz/ledgercli -fuzz FuzzArgv -fuzztime 5m
package ledgercli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"
	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/cli/version"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// Ids present in the seeded ledger, so fuzzed commands reach the ledger's
// state machines and not only its id parser.
const (
	rootID     = "7a5c0001-0000-4000-8000-000000000001"
	runningID  = "7a5c0002-0000-4000-8000-000000000002"
	closedID   = "7a5c0003-0000-4000-8000-000000000003"
	internalID = "7a5c0004-0000-4000-8000-000000000004"
)

// payloadHash is the internal task's fingerprint, which no output may
// show (get, children and list print only has_payload_hash).
var payloadHash = strings.Repeat("ab", 32)

// errorLines are the only outputs a refusal may print: the class, never
// an input value.
var errorLines = map[string]int{
	`{"error":"InvalidInput","ok":false}` + "\n":  2,
	`{"error":"TaskNotFound","ok":false}` + "\n":  2,
	`{"error":"StateConflict","ok":false}` + "\n": 2,
	`{"error":"InternalError","ok":false}` + "\n": 3,
}

// seedLedger builds the ledger every fuzz input starts from and returns
// its bytes.
func seedLedger(f testing.TB) []byte {
	dir := filepath.Join(f.TempDir(), "seed")
	db := filepath.Join(dir, "tasks.sqlite")
	if platformtest.Windows {
		// There the parent must exist; the CLI makes it elsewhere.
		if err := os.Mkdir(dir, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	for _, argv := range [][]string{
		{"create", "--task-id", rootID, "--timeout-seconds", "900"},
		{"create", "--task-id", runningID, "--parent-id", rootID},
		{"start", runningID},
		{"create", "--task-id", closedID, "--parent-id", rootID},
		{"close", closedID, "--status", "succeeded", "--code", "completed"},
		{"create", "--task-id", internalID, "--internal", "--payload-sha256", payloadHash},
	} {
		var out bytes.Buffer
		if status := ledgercli.Main(append(platformtest.ACLArgs("--db", db), argv...), &out, &out); status != 0 {
			f.Fatalf("seeding %v: exit %d: %s", argv, status, out.String())
		}
	}
	content, err := os.ReadFile(db)
	if err != nil {
		f.Fatal(err)
	}
	return content
}

// splitArgs turns fuzz bytes into argv: NUL separates arguments (a real
// argv cannot contain NUL either). Every spelling of the top-level --db
// option before the command is dropped, so the command always runs against
// the scratch ledger and never against a path the fuzzer made up. From the
// command on, argparse hands every word to the command's own parser, where
// --db means nothing and --d is another option's abbreviation, so those
// words stay. It also returns the command word ("" when none).
func splitArgs(input string) (args []string, command string) {
	for _, a := range strings.Split(input, "\x00") {
		name, _, _ := strings.Cut(a, "=")
		if command == "" && len(name) >= 3 && strings.HasPrefix("--db", name) {
			continue
		}
		if command == "" && !strings.HasPrefix(a, "-") {
			command = a
		}
		args = append(args, a)
	}
	return args, command
}

func FuzzArgv(f *testing.F) {
	f.Setenv(ledgercli.TestClockEnv, "1")
	f.Setenv(ledgercli.TestNowEnv, "978308200")
	seed := seedLedger(f)

	for _, s := range []string{
		"init",
		"doctor",
		"create",
		"create\x00--task-id\x00" + rootID + "\x00--timeout-seconds\x00900",
		"create\x00--ta\x00{7A5C0009-0000-4000-8000-000000000009}\x00--par\x00" + rootID + "\x00--i",
		"create\x00--timeout-seconds\x00 1e308 ",
		"create\x00--t\x005",
		"start\x00" + rootID,
		"start\x00not-a-uuid",
		"heartbeat\x00" + runningID,
		"close\x00" + runningID + "\x00--status\x00timed_out\x00--code\x00deadline_exceeded",
		"close\x00" + closedID + "\x00--status=succeeded\x00--code=Bad Code",
		"delivery\x00" + closedID + "\x00--status\x00delivered\x00--code\x00transport_acknowledged",
		"delivery\x00" + internalID + "\x00--status\x00not_applicable",
		"reconcile",
		"reconcile\x00--dry-run\x00--active-grace-seconds\x000\x00--de\x00-0",
		"reconcile\x00--d\x005",
		"get\x00urn:uuid:7a5c0002000040008000000000000002",
		"children\x00" + rootID,
		"list",
		"list\x00--status\x00queued\x00--st\x00running\x00--limit\x001",
		"list\x00--delivery=pending\x00--ended-before\x00 1e10 \x00--after\x00{7A5C0001-0000-4000-8000-000000000001}",
		"list\x00--parent-id\x00" + rootID + "\x00--updated-before\x00978308200",
		"list\x00--limit\x00+1000\x00--after\x00urn:uuid:7a5c0002000040008000000000000002",
		"list\x00--limit\x000",
		"list\x00--limit\x001_0",
		"list\x00--status\x00Queued",
		"list\x00--updated-before\x00-1",
		"list\x00--help",
		"backup\x00--to\x00copy.sqlite",
		"restore\x00--from\x00copy.sqlite",
		"restore\x00--fr=x",
		"prune\x00--ended-before\x00978308200\x00--dry-run",
		"prune\x00--ended-before\x001e10",
		"prune\x00--ended-before\x00-1",
		"prune\x00--end=\x00--dr",
		"--help",
		"create\x00--help",
		"--version",
		"--allow-external-acl\x00doctor",
		"frobnicate",
		"--=x\x00init",
		"-hx",
		"close\x00" + rootID + "\x00--status",
	} {
		f.Add(s)
	}

	f.Fuzz(func(t *testing.T, input string) {
		dir := filepath.Join(memdir.TempDir(t), "ledger")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "tasks.sqlite")
		if err := os.WriteFile(db, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		args, command := splitArgs(input)
		if command == "backup" {
			// backup writes where --to says: never let the fuzzer name
			// that path. The copy goes beside the scratch ledger.
			args = []string{"backup", "--to", filepath.Join(dir, "copy.sqlite")}
		}
		if command == "restore" {
			// restore reads where --from says: the same rule, a backup
			// beside the scratch ledger (none there: a refusal).
			args = []string{"restore", "--from", filepath.Join(dir, "copy.sqlite")}
		}
		argv := append(platformtest.ACLArgs("--db", db), args...)
		var stdout, stderr bytes.Buffer
		status := ledgercli.Main(argv, &stdout, &stderr)
		if err := judgeArgv(argv, status, stdout.String(), stderr.String(), db); err != nil {
			t.Fatal(err)
		}
	})
}

// judgeArgv is FuzzArgv's oracle on one call's exit status and output; db
// is the scratch ledger the call ran against.
func judgeArgv(argv []string, status int, out, stderr, db string) error {
	if stderr != "" {
		return fmt.Errorf("argv %q: stderr not empty", argv)
	}
	if status == 0 && (strings.HasPrefix(out, "usage: task-state-guard") || out == "task-state-guard "+version.String()+"\n") {
		return nil // help and version are the only plain-text outputs
	}
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") || !json.Valid([]byte(out)) {
		return fmt.Errorf("argv %q: stdout is not one JSON line: %q", argv, out)
	}
	if want, isError := errorLines[out]; isError {
		if status != want {
			return fmt.Errorf("argv %q: exit %d for %s", argv, status, out)
		}
		if status == 3 {
			// The scratch ledger is only ever changed through the CLI,
			// so nothing here may be unexpected.
			return fmt.Errorf("argv %q: InternalError on a healthy ledger", argv)
		}
		return nil
	}
	switch status {
	case 0:
	case 1:
		return fmt.Errorf("argv %q: doctor found a ledger written only by the CLI unhealthy: %s", argv, out)
	default:
		return fmt.Errorf("argv %q: exit %d with output %s", argv, status, out)
	}
	if strings.Contains(out, payloadHash) {
		return fmt.Errorf("argv %q: the payload fingerprint was printed: %s", argv, out)
	}
	if strings.Contains(out, `"error"`) {
		return fmt.Errorf("argv %q: success output carries an error key: %s", argv, out)
	}
	return ledgerHealthy(argv, db)
}

// ledgerHealthy runs the doctor on db after a call that succeeded: a
// command line that corrupts the ledger shows here, not in its own output.
func ledgerHealthy(argv []string, db string) error {
	var stdout, stderr bytes.Buffer
	status := ledgercli.Main(platformtest.ACLArgs("--db", db, "doctor"), &stdout, &stderr)
	var rep struct {
		Healthy *bool `json:"healthy"`
	}
	if status != 0 || stderr.Len() != 0 || json.Unmarshal(stdout.Bytes(), &rep) != nil || rep.Healthy == nil || !*rep.Healthy {
		return fmt.Errorf("argv %q: the ledger is unhealthy afterwards: doctor exit %d: %s%s", argv, status, stdout.String(), stderr.String())
	}
	return nil
}
