// Package ledgercli is the task-state-guard command line: argv in, one compact
// JSON line out (spec/task-state-guard.md §13).
//
// Main never exits the process. Every run except --help and --version
// prints exactly one line of JSON with sorted keys; a failure prints only its
// class ({"error":"InvalidInput","ok":false}), never the rejected value, a
// path or an error message. Nothing is written to stderr unless the
// environment holds TASK_STATE_GUARD_EXPLAIN=1: then a failure also writes
// one line "task-state-guard: CLASS: REASON" to stderr, where REASON is one
// of a fixed set of phrases (ledger.Reason and this package's own), never a
// value, id or path.
//
// Test clock: when the environment holds TASK_STATE_GUARD_TEST_CLOCK=1, the
// ledger's clock is pinned to TASK_STATE_GUARD_TEST_NOW (Unix seconds, a
// plain decimal number; missing or malformed is InvalidInput). Without
// TASK_STATE_GUARD_TEST_CLOCK=1 the variable TASK_STATE_GUARD_TEST_NOW is
// ignored and the wall clock is used. Script tests, the fixture replay and
// the demo rely on it; anyone who can set the environment of the process
// can also move the clock, which the threat model accepts (same user).
package ledgercli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/postgres"
)

// Environment variables of the test clock (see the package comment).
const (
	TestClockEnv = "TASK_STATE_GUARD_TEST_CLOCK"
	TestNowEnv   = "TASK_STATE_GUARD_TEST_NOW"
)

// ExplainEnv switches on the one-line reason on stderr for a failure.
const ExplainEnv = "TASK_STATE_GUARD_EXPLAIN"

// Exit statuses.
const (
	exitOK        = 0
	exitUnhealthy = 1
	exitClassed   = 2
	exitInternal  = 3
)

// errInternal stands for anything that is not one of the ledger's classes.
var errInternal = errors.New("InternalError")

// explainedError gives a class (or errUsage) a fixed, value-free reason.
type explainedError struct {
	class  error
	reason string
}

func (e *explainedError) Error() string { return e.class.Error() + ": " + e.reason }
func (e *explainedError) Unwrap() error { return e.class }

func explained(class error, reason string) error { return &explainedError{class, reason} }

// The CLI's own refusals outside argument parsing.
var (
	errPanic          = explained(errInternal, "unexpected internal error") // a defect
	errBadTestClock   = explained(ledger.ErrInvalidInput, "test clock time is not a plain finite decimal number")
	errBadPayloadHash = explained(ledger.ErrInvalidInput, "payload hash must be 64 lowercase hex characters")
	errBadSeconds     = explained(ledger.ErrInvalidInput, "a seconds value is not a finite, non-negative number")
	errBadLimit       = explained(ledger.ErrInvalidInput, "page size must be 1 to 1000")
	errNoLedger       = explained(ledger.ErrTaskNotFound, "database does not exist, so it holds no task")
)

// reason returns the fixed reason of err for the explanation line.
func reason(err error) string {
	var ee *explainedError
	if errors.As(err, &ee) {
		return ee.reason
	}
	if r := ledger.Reason(err); r != "" {
		return r
	}
	return "no further detail"
}

// Main runs the CLI with args (without the program name) and returns the
// exit status: 0 success or healthy doctor, 1 unhealthy doctor, 2
// InvalidInput/TaskNotFound/StateConflict, 3 InternalError.
func Main(args []string, stdout, stderr io.Writer) int {
	return runExplained(args, stdout, stderr, os.Getenv)
}

// run is Main with the environment injected and stderr discarded, so tests
// need not mutate the process environment.
func run(args []string, stdout io.Writer, getenv func(string) string) int {
	return runExplained(args, stdout, io.Discard, getenv)
}

func runExplained(args []string, stdout, stderr io.Writer, getenv func(string) string) (status int) {
	writeError := func(stdout io.Writer, err error) int {
		class, status := classify(err)
		_, _ = fmt.Fprintf(stdout, "{\"error\":%q,\"ok\":false}\n", class)
		if getenv(ExplainEnv) == "1" {
			_, _ = fmt.Fprintf(stderr, "task-state-guard: %s: %s\n", class, reason(err))
		}
		return status
	}
	defer func() {
		if r := recover(); r != nil {
			// An unexpected panic is an internal error; its text may hold
			// input, so it is dropped.
			status = writeError(stdout, errPanic)
		}
	}()
	inv, out, err := parseCommandLine(args)
	if err != nil {
		return writeError(stdout, err)
	}
	if out != "" {
		// --help or --version: plain text, exit 0; 3, as for every
		// answer, when stdout cannot take it.
		if _, err := io.WriteString(stdout, out); err != nil {
			return exitInternal
		}
		return exitOK
	}
	clock, err := clockFromEnv(getenv)
	if err != nil {
		return writeError(stdout, err)
	}
	result, status, err := execute(inv, clock)
	if err != nil {
		if inv.metricsTo != "" && !errors.Is(err, errMetricsDir) && !errors.Is(err, errMetricsWrite) {
			// The textfile must not keep showing the last good counts:
			// it says the run failed. A failure to write it changes
			// nothing in the answer, which is the refusal's.
			_ = writeMetricsFile(inv.metricsTo, metricsDown)
		}
		return writeError(stdout, err)
	}
	answer, isText := result.(exposition)
	line := []byte(answer)
	if !isText {
		line = encodeLine(result)
	}
	if _, err := stdout.Write(line); err != nil {
		// The call may have committed, but exit 0 without the answer
		// would read as success unseen: exit 3 (spec L-table).
		return exitInternal
	}
	return status
}

// clockFromEnv returns the pinned test clock in Unix seconds, the float
// the ledger stores, or nil (the ledger's wall clock) when the test clock
// is not switched on.
func clockFromEnv(getenv func(string) string) (func() float64, error) {
	if getenv(TestClockEnv) != "1" {
		return nil, nil
	}
	text := trimASCIISpace(getenv(TestNowEnv))
	if !isPlainDecimal(text) {
		return nil, errBadTestClock
	}
	now, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(now, 0) || math.IsNaN(now) {
		return nil, errBadTestClock
	}
	return func() float64 { return now }, nil
}

// classify maps an error to its public class; the one place that does.
func classify(err error) (string, int) {
	switch {
	case errors.Is(err, errUsage), errors.Is(err, ledger.ErrInvalidInput):
		return "InvalidInput", exitClassed
	case errors.Is(err, ledger.ErrTaskNotFound):
		return "TaskNotFound", exitClassed
	case errors.Is(err, ledger.ErrStateConflict):
		return "StateConflict", exitClassed
	default:
		return "InternalError", exitInternal
	}
}

// execute opens the ledger the way the command needs, runs it and returns
// the JSON value to print with its exit status.
func execute(inv *invocation, clock func() float64) (result any, status int, err error) {
	opts := ledgerOptions(inv, clock)
	if inv.command == "restore" {
		// Restore opens the ledger itself, for itself alone: a file is
		// replaced (the old one set aside), a server's ledger must be
		// empty, since a server keeps no set-aside copy.
		var rep ledger.BackupReport
		var err error
		if isServerURL(inv.db) {
			rep, err = postgres.Restore(context.Background(), inv.db, inv.restoreFrom, serverOptions(inv, opts, clock))
		} else {
			rep, err = ledger.Restore(inv.db, inv.restoreFrom, ledger.Options{AllowExternalACL: inv.allowExternalACL})
		}
		if err != nil {
			return nil, 0, err
		}
		return object{"ok": true, "restore": rep}, exitOK, nil
	}
	if isServerURL(inv.db) {
		return executeOn(inv, func() (*ledger.Ledger, error) { return openServer(inv, opts, clock) })
	}
	if inv.needsExistingTask() {
		// No ledger holds no task: answer so without creating one (L1).
		missing, err := ledger.DatabaseMissing(inv.db, opts)
		if err != nil {
			return nil, 0, err
		}
		if missing {
			return nil, 0, errNoLedger
		}
	}
	return executeOn(inv, func() (*ledger.Ledger, error) { return ledger.Open(inv.db, opts) })
}

// ledgerOptions are the options the command opens its ledger with, on
// the test clock when there is one (nil: the wall clock).
func ledgerOptions(inv *invocation, clock func() float64) ledger.Options {
	opts := ledger.Options{
		ReadOnly:         inv.readOnly(),
		MustExist:        inv.mustExist(),
		AllowExternalACL: inv.allowExternalACL,
	}
	if clock != nil {
		// The reference's seconds, which no Time may hold.
		opts.SetClockSeconds(clock)
	}
	return opts
}

// serverOptions are the PostgreSQL engine's options for the options a
// file ledger would get. The external-ACL acknowledgement goes along: it
// is what Windows needs for the file a backup writes, and it accepts no
// grant on the server (spec 20.6).
func serverOptions(inv *invocation, opts ledger.Options, clock func() float64) postgres.Options {
	popts := postgres.Options{
		ReadOnly:         opts.ReadOnly,
		MustExist:        opts.MustExist || inv.needsExistingTask(),
		AllowExternalACL: opts.AllowExternalACL,
	}
	if clock != nil {
		popts.SetFixedClockSeconds(clock)
	}
	return popts
}

// openServer opens the PostgreSQL engine's ledger with the options a file
// ledger would get. A database without the ledger's schema is a missing
// ledger: the commands that address a stored task answer TaskNotFound
// for it, as for a missing file, and nothing is made (L1).
func openServer(inv *invocation, opts ledger.Options, clock func() float64) (*ledger.Ledger, error) {
	l, err := postgres.Open(context.Background(), inv.db, serverOptions(inv, opts, clock))
	if err != nil && inv.needsExistingTask() && errors.Is(err, ledger.ErrInvalidInput) && ledger.Reason(err) == "database does not exist" {
		return nil, errNoLedger
	}
	return l, err
}

// executeOn opens the ledger with open, runs the command on it and closes
// it.
func executeOn(inv *invocation, open func() (*ledger.Ledger, error)) (result any, status int, err error) {
	l, err := open()
	if err != nil {
		return nil, 0, err
	}
	defer func() {
		if cerr := l.Close(); cerr != nil && err == nil {
			result, status, err = nil, 0, cerr
		}
	}()

	taskResult := func(t ledger.Task, err error) (any, int, error) {
		if err != nil {
			return nil, 0, err
		}
		return object{"ok": true, "task": t}, exitOK, nil
	}
	switch inv.command {
	case "init":
		return object{"ok": true, "storage": l.StorageInfo()}, exitOK, nil
	case "create":
		params := ledger.CreateParams{
			TaskID:      inv.taskID,
			ParentID:    inv.parentID,
			PayloadHash: inv.payloadHash,
			Internal:    inv.internal,
		}
		if inv.timeout != nil {
			// The reference's seconds, which no Duration may hold.
			params.SetTimeoutSeconds(*inv.timeout)
		}
		return taskResult(l.Create(params))
	case "start":
		return taskResult(l.Start(inv.taskID))
	case "heartbeat":
		return taskResult(l.Heartbeat(inv.taskID))
	case "close":
		return taskResult(l.CloseTaskOptionalCode(context.Background(), inv.taskID, ledger.Status(inv.status), inv.code))
	case "delivery":
		return taskResult(l.SetDeliveryOptionalCode(context.Background(), inv.taskID, ledger.DeliveryStatus(inv.status), inv.code))
	case "get":
		return taskResult(l.Get(inv.taskID))
	case "children":
		children, err := l.ChildrenOf(inv.taskID)
		if err != nil {
			return nil, 0, err
		}
		return object{"ok": true, "tasks": children}, exitOK, nil
	case "history":
		events, err := l.History(inv.taskID)
		if err != nil {
			return nil, 0, err
		}
		return object{"ok": true, "events": events}, exitOK, nil
	case "metrics":
		var opts ledger.MetricsOptions
		opts.SetGraceSeconds(inv.activeGrace, inv.deliveryGrace)
		rep, err := l.Metrics(opts)
		if err != nil {
			return nil, 0, err
		}
		text := metricsText(rep, l.StorageInfo().Engine, inv.activeGrace, inv.deliveryGrace)
		if inv.metricsTo == "" {
			return exposition(text), exitOK, nil
		}
		if err := writeMetricsFile(inv.metricsTo, text); err != nil {
			return nil, 0, err
		}
		return object{"ok": true}, exitOK, nil
	case "backup":
		rep, err := l.Backup(inv.backupTo)
		if err != nil {
			return nil, 0, err
		}
		return object{"ok": true, "backup": rep}, exitOK, nil
	case "list":
		page, err := l.List(inv.list)
		if err != nil {
			return nil, 0, err
		}
		return okAnd{page}, exitOK, nil
	case "prune":
		opts := ledger.PruneOptions{DryRun: inv.dryRun}
		// The reference's seconds, which no Time may hold.
		opts.SetEndedBeforeSeconds(inv.pruneBefore)
		rep, err := l.Prune(opts)
		if err != nil {
			return nil, 0, err
		}
		return object{"ok": true, "prune": rep}, exitOK, nil
	case "reconcile":
		opts := ledger.ReconcileOptions{DryRun: inv.dryRun}
		opts.SetGraceSeconds(inv.activeGrace, inv.deliveryGrace)
		rep, err := l.Reconcile(opts)
		if err != nil {
			return nil, 0, err
		}
		return object{"ok": true, "reconcile": rep}, exitOK, nil
	case "doctor":
		rep, err := l.Doctor()
		if err != nil {
			return nil, 0, err
		}
		if rep.Healthy {
			return rep, exitOK, nil
		}
		return rep, exitUnhealthy, nil
	}
	return nil, 0, errPanic
}

// Every state, in the order the metrics and the help list them.
var (
	taskStates = []ledger.Status{
		ledger.StatusQueued, ledger.StatusRunning, ledger.StatusSucceeded,
		ledger.StatusFailed, ledger.StatusTimedOut, ledger.StatusCancelled,
	}
	deliveryStates = []ledger.DeliveryStatus{
		ledger.DeliveryPending, ledger.DeliveryDelivered,
		ledger.DeliveryFailed, ledger.DeliveryNotApplicable,
	}
)
