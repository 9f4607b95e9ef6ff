package ledgercli_test

// Shared by the process-level tests of this package (crash loop,
// linearizability): a ledger call as data, its command line for the real
// binary, its answer according to the executable model (model/ledger), and
// both answers in one comparable form.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	model "github.com/stateguard/stateguard/model/ledger"
)

// TestMain removes the binary the tests built and stops the package's
// PostgreSQL cluster, if a test started one.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binFile string
	binErr  error
)

// ledgerBinary builds cmd/task-state-guard once per test binary.
func ledgerBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "task-state-guard-bin-")
		if binErr == nil {
			binFile, binErr = platformtest.CommandBinary(binDir, "task-state-guard")
			// Tests that run the binary as another user need to reach it.
			os.Chmod(binDir, 0o711)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binFile
}

// poolID is the n-th task id the tests use.
func poolID(n int) string { return fmt.Sprintf("5eed%04x-0000-4000-8000-%012x", n%0x10000, n) }

// ledgerOp is one CLI call. Now is the pinned test clock of the process.
type ledgerOp struct {
	Kind          string // create start heartbeat close delivery reconcile get
	ID, Parent    string
	Timeout       float64 // create: 0 means none
	Internal      bool
	Status, Code  string
	ActiveGrace   float64
	DeliveryGrace float64
	DryRun        bool
	Now           float64
}

// args is the command line after the binary's name.
func (o ledgerOp) args(db string) []string {
	a := platformtest.ACLArgs("--db", db, o.Kind)
	switch o.Kind {
	case "create":
		a = append(a, "--task-id", o.ID)
		if o.Parent != "" {
			a = append(a, "--parent-id", o.Parent)
		}
		if o.Timeout > 0 {
			a = append(a, "--timeout-seconds", fmt.Sprint(o.Timeout))
		}
		if o.Internal {
			a = append(a, "--internal")
		}
	case "close", "delivery":
		a = append(a, o.ID, "--status", o.Status)
		if o.Code != "" {
			a = append(a, "--code", o.Code)
		}
	case "reconcile":
		a = append(a, "--active-grace-seconds", fmt.Sprint(o.ActiveGrace), "--delivery-grace-seconds", fmt.Sprint(o.DeliveryGrace))
		if o.DryRun {
			a = append(a, "--dry-run")
		}
	default:
		a = append(a, o.ID)
	}
	return a
}

// env pins the process's clock.
func (o ledgerOp) env() []string {
	return []string{ledgercli.TestClockEnv + "=1", ledgercli.TestNowEnv + "=" + strconv.FormatFloat(o.Now, 'f', -1, 64)}
}

// String is the call as a person reads it in a history.
func (o ledgerOp) String() string {
	return fmt.Sprintf("now=%.2f %s", o.Now, strings.Join(o.args("DB")[2:], " "))
}

// writes reports whether the call may change the ledger.
func (o ledgerOp) writes() bool {
	return o.Kind != "get" && !(o.Kind == "reconcile" && o.DryRun)
}

// apply runs the call on the model (mutating m) and returns the answer in
// comparable form.
func (o ledgerOp) apply(m *model.Model) string {
	var (
		task model.Task
		err  error
	)
	switch o.Kind {
	case "create":
		p := model.CreateParams{TaskID: o.ID, ParentID: o.Parent, DeliveryRequired: !o.Internal}
		if o.Timeout > 0 {
			to := o.Timeout
			p.TimeoutSeconds = &to
		}
		task, err = m.Create(p, o.Now)
	case "start":
		task, err = m.Start(o.ID, o.Now)
	case "heartbeat":
		task, err = m.Heartbeat(o.ID, o.Now)
	case "close":
		task, err = m.Close(o.ID, o.Status, o.Code, o.Now)
	case "delivery":
		task, err = m.SetDelivery(o.ID, o.Status, o.Code, o.Now)
	case "get":
		task, err = m.Get(o.ID)
	case "reconcile":
		rep, err := m.Reconcile(o.Now, o.ActiveGrace, o.DeliveryGrace, o.DryRun)
		if err != nil {
			return "error " + errorClass(err)
		}
		return "reconcile " + canonicalJSON(map[string]any{
			"active_examined": rep.ActiveExamined, "tasks_timed_out": rep.TasksTimedOut,
			"fresh_active_retained": rep.FreshActiveRetained, "pending_delivery_examined": rep.PendingDeliveryExamined,
			"deliveries_failed": rep.DeliveriesFailed, "deliveries_not_applicable": rep.DeliveriesNotApplicable,
			"pending_delivery_retained": rep.PendingDeliveryRetained, "dry_run": rep.DryRun, "applied": rep.Applied,
		})
	default:
		panic("unknown op " + o.Kind)
	}
	if err != nil {
		return "error " + errorClass(err)
	}
	return "task " + canonicalJSON(taskMap(task))
}

// applyTo is apply on a ledger whose file may not exist yet (*exists
// false). On a missing file only create without a parent makes the ledger
// (spec 13.6); the calls that need a stored task answer TaskNotFound, and
// get and reconcile, applied or dry (L7), answer InvalidInput, all
// creating nothing. The model has no file, so this state lives here.
func (o ledgerOp) applyTo(m *model.Model, exists *bool) string {
	if !*exists {
		switch {
		case o.Kind == "create" && o.Parent == "":
			*exists = true
		case o.Kind == "get" || o.Kind == "reconcile":
			return "error " + model.ErrInvalidInput.Error()
		default:
			return "error " + model.ErrTaskNotFound.Error()
		}
	}
	return o.apply(m)
}

func errorClass(err error) string {
	for _, c := range []error{model.ErrInvalidInput, model.ErrTaskNotFound, model.ErrStateConflict} {
		if errors.Is(err, c) {
			return c.Error()
		}
	}
	return "unclassified: " + err.Error()
}

// taskMap is the model's task as the CLI prints it.
func taskMap(t model.Task) map[string]any {
	return map[string]any{
		"id": t.ID, "parent_id": ptr(t.ParentID), "status": t.Status, "delivery_status": t.DeliveryStatus,
		"delivery_required": t.DeliveryRequired, "has_payload_hash": t.PayloadHash != nil,
		"timeout_seconds": ptr(t.TimeoutSeconds), "created_at": t.CreatedAt, "started_at": ptr(t.StartedAt),
		"updated_at": t.UpdatedAt, "ended_at": ptr(t.EndedAt), "deadline_at": ptr(t.DeadlineAt),
		"delivery_updated_at": t.DeliveryUpdatedAt, "terminal_code": ptr(t.TerminalCode),
		"delivery_code": ptr(t.DeliveryCode), "version": t.Version,
	}
}

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// canonicalJSON re-encodes v with numbers as float64, so that the CLI's
// Python-style number text and the model's Go numbers compare by value.
func canonicalJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		panic(err)
	}
	b, _ = json.Marshal(back)
	return string(b)
}

// cliAnswer turns a CLI answer (one JSON line and the exit status) into
// the comparable form of apply.
func cliAnswer(stdout string, rc int) string {
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		return fmt.Sprintf("unparseable (exit %d): %q", rc, stdout)
	}
	switch {
	case rc == 0 && v["task"] != nil:
		return "task " + canonicalJSON(v["task"])
	case rc == 0 && v["reconcile"] != nil:
		return "reconcile " + canonicalJSON(v["reconcile"])
	case rc == 2 && v["error"] != nil:
		return fmt.Sprintf("error %v", v["error"])
	}
	return fmt.Sprintf("unexpected (exit %d): %s", rc, strings.TrimSpace(stdout))
}

// runLedger runs the binary and returns stdout and the exit status.
func runLedger(t testing.TB, bin string, args ...string) (string, int) {
	t.Helper()
	var out []byte
	err := platformtest.RetryWineStart(t, func() (err error) {
		out, err = exec.Command(bin, platformtest.ACLArgs(args...)...).Output()
		return err
	})
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		return err.Error(), -1
	}
	return string(out), 0
}
