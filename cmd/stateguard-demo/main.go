// Command stateguard-demo runs both engines end to end on a throwaway
// directory. Its name says whose it is, since `go install ./cmd/...` puts
// it beside the two CLIs. First the task-state-guard restart walk-through: it seeds a small synthetic
// ledger through the Go API with an injected clock, then drives the real CLI
// for a preview, an apply, an idempotent recheck and the doctor. Then a short
// sweep with sweep-state: lease, upserts (one sensitive), cursor, validate,
// run record, release and a final read. Each command line is printed with
// its output. Run it with `go run ./cmd/stateguard-demo`.
//
// The output is deterministic: every id is fixed, the ledger's clock is
// injected while seeding, and the CLI runs with its test clock
// (TASK_STATE_GUARD_TEST_CLOCK=1) pinned to one instant. The temporary path
// is printed as <temporary-demo>, so two runs print identical bytes.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/cli/sweepcli"
)

// Demo clock: everything is seeded at seedTime (2001-01-01T00:00:00Z); the
// CLI runs a little over a day later, past both graces.
const (
	seedTime      = 978307200.0
	reconcileTime = seedTime + 100000
	activeGrace   = "600"
	deliveryGrace = "86400"
)

// The synthetic sample: fixed, public, non-identifying ids.
const (
	queuedID   = "00000000-0000-4000-8000-00000000d001"
	staleID    = "00000000-0000-4000-8000-00000000d002"
	requiredID = "00000000-0000-4000-8000-00000000d003"
	internalID = "00000000-0000-4000-8000-00000000d004"
)

func main() {
	os.Exit(run(os.Stdout))
}

// run performs the whole demo and returns the exit status.
func run(out io.Writer) int {
	dir, err := os.MkdirTemp("", "stateguard-demo-")
	if err != nil {
		fmt.Fprintln(out, "stateguard-demo: cannot create a temporary directory")
		return 1
	}
	defer os.RemoveAll(dir)

	if err := ledgerWalk(out, dir); err != nil {
		fmt.Fprintln(out, "stateguard-demo:", err)
		return 1
	}
	if err := sweepWalk(out, dir); err != nil {
		fmt.Fprintln(out, "stateguard-demo:", err)
		return 1
	}
	return 0
}

// onWindows: there the demo gives the external-ACL acknowledgement, which
// opening a ledger requires. It vouches only for its own new directory in
// the user's temporary folder, which Windows makes private to the user.
const onWindows = runtime.GOOS == "windows"

// ledgerWalk is the task-state-guard part of the demo.
func ledgerWalk(out io.Writer, dir string) error {
	db := filepath.Join(dir, "tasks.sqlite")
	if err := seedLedger(db); err != nil {
		return err
	}
	reconcile := []string{"reconcile", "--active-grace-seconds", activeGrace, "--delivery-grace-seconds", deliveryGrace}
	steps := []struct {
		label      string
		args       []string
		wantStatus int
	}{
		{"preview", append(append([]string{}, reconcile...), "--dry-run"), 0},
		{"apply", reconcile, 0},
		{"idempotent-recheck", reconcile, 0},
		{"doctor", []string{"doctor"}, 0},
	}
	restore := pinCLIClock(reconcileTime)
	defer restore()
	for _, s := range steps {
		top := []string{"--db", db}
		shown := "task-state-guard --db <temporary-demo>/tasks.sqlite "
		if onWindows {
			top = append(top, "--allow-external-acl")
			shown += "--allow-external-acl "
		}
		argv := append(top, s.args...)
		var stdout, stderr bytes.Buffer
		status := ledgercli.Main(argv, &stdout, &stderr)
		shown += strings.Join(s.args, " ")
		fmt.Fprintf(out, "[%s] command: %s\n", s.label, shown)
		fmt.Fprintf(out, "[%s] output: %s", s.label, stdout.String())
		if status != s.wantStatus || stderr.Len() != 0 {
			return fmt.Errorf("%s exited %d", s.label, status)
		}
	}
	return nil
}

// sweepWalk is the sweep-state part of the demo: one sweep of a nightly
// writer over a fresh state file, with the status word and payload of every
// call. Every time is passed explicitly, so the output never varies.
func sweepWalk(out io.Writer, dir string) error {
	state := filepath.Join(dir, "sweep", "state.yml")
	const shownState = "<temporary-demo>/sweep/state.yml"
	steps := [][]string{
		{"lease-acquire", "--writer", "nightly", "--ttl-minutes", "30", "--now", "2026-07-02T12:00:00Z"},
		{"lease-acquire", "--writer", "manual", "--now", "2026-07-02T12:05:00Z"},
		{"upsert-item", "--writer", "nightly", "--source", "chat", "--id", "1719921600.000100",
			"--json", `{"status": "ingested", "title": "Build fails on main", "body": "stack trace here"}`,
			"--now", "2026-07-02T12:06:00Z"},
		{"upsert-item", "--writer", "nightly", "--source", "mail", "--id", "42",
			"--json", `{"status": "closed", "sensitive": true, "title": "Password reset", "body": "private text", "fix_ref": "PR-7"}`,
			"--now", "2026-07-02T12:07:00Z"},
		{"cursor-advance", "--writer", "nightly", "--source", "chat", "--to", "1719921600.000100",
			"--past-item", "1719921600.000100", "--now", "2026-07-02T12:08:00Z"},
		{"validate"},
		{"run-record", "--writer", "nightly", "--outcome", "completed",
			"--counts", `{"ingested": 2, "downgraded": 1}`, "--timestamp", "2026-07-02T12:09:00Z"},
		{"lease-release", "--writer", "nightly"},
		{"read"},
	}
	for _, args := range steps {
		argv := append([]string{args[0], "--state", state}, args[1:]...)
		var stdout, stderr bytes.Buffer
		status := sweepcli.Main(argv, &stdout, &stderr)
		shown := append([]string{"sweep-state", args[0], "--state", shownState}, args[1:]...)
		fmt.Fprintf(out, "[sweep] command: %s\n", shellJoin(shown))
		for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			fmt.Fprintf(out, "[sweep] output: %s\n", line)
		}
		if status != 0 || stderr.Len() != 0 {
			return fmt.Errorf("sweep-state %s exited %d", args[0], status)
		}
	}
	return nil
}

// shellJoin quotes, for a POSIX shell, every argument that is not plainly
// safe, so a printed command can be pasted. The <temporary-demo>
// placeholder stays bare to read like the reference's output.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if plainArg.MatchString(a) {
			quoted[i] = a
		} else {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_./:=+<>-]+$`)

// seedLedger writes the synthetic sample through the Go API: one queued
// task, one running task that goes stale, and one delivery-required and one
// internal task that ended at seed time and wait for delivery.
func seedLedger(db string) error {
	l, err := ledger.Open(db, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(seedTime, 0) }})
	if err != nil {
		return errors.New("cannot open the demo ledger")
	}
	seed := func() error {
		for _, p := range []ledger.CreateParams{
			{TaskID: queuedID},
			{TaskID: staleID},
			{TaskID: requiredID},
			{TaskID: internalID, Internal: true},
		} {
			if _, err := l.Create(p); err != nil {
				return err
			}
		}
		if _, err := l.Start(staleID); err != nil {
			return err
		}
		for _, id := range []string{requiredID, internalID} {
			if _, err := l.CloseTask(id, ledger.StatusSucceeded, "worker_completed"); err != nil {
				return err
			}
		}
		return nil
	}
	seedErr := seed()
	closeErr := l.Close()
	if seedErr != nil || closeErr != nil {
		return errors.New("cannot seed the demo ledger")
	}
	return nil
}

// pinCLIClock switches on the CLI's test clock at now and returns a
// function that restores the previous environment.
func pinCLIClock(now float64) func() {
	saved := map[string]*string{}
	for _, k := range []string{ledgercli.TestClockEnv, ledgercli.TestNowEnv} {
		if v, ok := os.LookupEnv(k); ok {
			saved[k] = &v
		} else {
			saved[k] = nil
		}
	}
	os.Setenv(ledgercli.TestClockEnv, "1")
	os.Setenv(ledgercli.TestNowEnv, strconv.FormatFloat(now, 'f', -1, 64))
	return func() {
		for k, v := range saved {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}
}
