package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// scriptedClock is a settable clock for tests.
type scriptedClock struct{ now float64 }

func (c *scriptedClock) read() float64 { return c.now }

// sequentialIDs returns ids 00000000-0000-4000-8000-00000000000N in order.
func sequentialIDs() func() (string, error) {
	n := 0
	return func() (string, error) {
		n++
		return fmt.Sprintf("00000000-0000-4000-8000-%012x", n), nil
	}
}

func openTest(t *testing.T) (*Ledger, *scriptedClock, string) {
	t.Helper()
	clk := &scriptedClock{now: 1000}
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	l, err := Open(p, withClockSeconds(Options{AllowExternalACL: onWindows, NewID: sequentialIDs()}, clk.read))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, clk, p
}

func wantClass(t *testing.T, err, class error) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("got %v, want %v", err, class)
	}
}

func f64(v float64) *float64 { return &v }

func healthy(t *testing.T, l *Ledger) {
	t.Helper()
	rep, err := l.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Healthy {
		t.Fatalf("doctor unhealthy: %s", reportJSON(rep))
	}
}

func TestLifecycle(t *testing.T) {
	l, clk, _ := openTest(t)
	task, err := l.Create(timeoutSeconds(CreateParams{}, 900))
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "00000000-0000-4000-8000-000000000001" || task.Status != StatusQueued || task.DeliveryStatus != DeliveryPending ||
		task.Version != 0 || !task.CreatedAt.Equal(unixTime(1000)) || !task.DeliveryUpdatedAt.Equal(unixTime(1000)) || !task.UpdatedAt.Equal(unixTime(1000)) {
		t.Fatalf("created %+v", task)
	}
	clk.now = 1010
	task, err = l.Start(task.ID)
	if err != nil || task.Status != StatusRunning || !task.StartedAt.Equal(unixTime(1010)) || !task.DeadlineAt.Equal(unixTime(1910)) || task.Version != 1 {
		t.Fatalf("start %+v %v", task, err)
	}
	clk.now = 1020
	again, err := l.Start(task.ID)
	if err != nil || again.Version != 1 {
		t.Fatalf("start again %+v %v", again, err)
	}
	task, err = l.Heartbeat(task.ID)
	if err != nil || !task.UpdatedAt.Equal(unixTime(1020)) || task.Version != 2 {
		t.Fatalf("heartbeat %+v %v", task, err)
	}
	clk.now = 1030
	task, err = l.CloseTask(task.ID, StatusSucceeded, "worker_completed")
	if err != nil || !task.EndedAt.Equal(unixTime(1030)) || !task.UpdatedAt.Equal(unixTime(1030)) || task.TerminalCode != CodeWorkerCompleted || task.Version != 3 {
		t.Fatalf("close %+v %v", task, err)
	}
	// Identical close: idempotent even with an invalid code.
	if same, err := l.CloseTask(task.ID, StatusSucceeded, "Not A Code"); err != nil || same.Version != 3 || same.TerminalCode != CodeWorkerCompleted {
		t.Fatalf("idempotent close %+v %v", same, err)
	}
	_, err = l.CloseTask(task.ID, StatusFailed, "")
	wantClass(t, err, ErrStateConflict)
	_, err = l.Heartbeat(task.ID)
	wantClass(t, err, ErrStateConflict)
	clk.now = 1040
	_, err = l.SetDelivery(task.ID, DeliveryNotApplicable, "")
	wantClass(t, err, ErrStateConflict)
	_, err = l.SetDelivery(task.ID, DeliveryDelivered, "internal_task")
	wantClass(t, err, ErrInvalidInput)
	task, err = l.SetDelivery(task.ID, DeliveryDelivered, "transport_acknowledged")
	if err != nil || !task.DeliveryUpdatedAt.Equal(unixTime(1040)) || task.Version != 4 {
		t.Fatalf("delivery %+v %v", task, err)
	}
	if _, err := l.SetDelivery(task.ID, DeliveryDelivered, "bogus code!"); err != nil {
		t.Fatalf("idempotent delivery: %v", err)
	}
	_, err = l.SetDelivery(task.ID, DeliveryFailed, "")
	wantClass(t, err, ErrStateConflict)

	child, err := l.Create(CreateParams{ParentID: task.ID, Internal: true})
	if err != nil || child.DeliveryRequired || *child.ParentID != task.ID {
		t.Fatalf("child %+v %v", child, err)
	}
	_, err = l.SetDelivery(child.ID, DeliveryNotApplicable, "")
	wantClass(t, err, ErrStateConflict) // task not terminal
	if _, err := l.CloseTask(child.ID, StatusCancelled, "caller_cancelled"); err != nil {
		t.Fatal(err)
	}
	_, err = l.SetDelivery(child.ID, DeliveryDelivered, "")
	wantClass(t, err, ErrStateConflict)
	if _, err := l.SetDelivery(child.ID, DeliveryNotApplicable, "internal_task"); err != nil {
		t.Fatal(err)
	}
	kids, err := l.ChildrenOf(task.ID)
	if err != nil || len(kids) != 1 || kids[0].ID != child.ID {
		t.Fatalf("children %v %v", kids, err)
	}
	healthy(t, l)
}

func TestCreateIdempotenceAndOrder(t *testing.T) {
	l, _, _ := openTest(t)
	id := "7A5C0001-0000-4000-8000-000000000001"
	a, err := l.Create(CreateParams{TaskID: id, PayloadHash: "ab" + repeat("0", 62)})
	if err != nil || a.ID != "7a5c0001-0000-4000-8000-000000000001" {
		t.Fatalf("%+v %v", a, err)
	}
	b, err := l.Create(CreateParams{TaskID: "{" + id + "}", PayloadHash: "ab" + repeat("0", 62)})
	if err != nil || b != a && b.ID != a.ID {
		t.Fatalf("idempotent create %v", err)
	}
	_, err = l.Create(CreateParams{TaskID: id})
	wantClass(t, err, ErrStateConflict)
	// create X with parent X: StateConflict when X exists, TaskNotFound when new.
	_, err = l.Create(CreateParams{TaskID: id, ParentID: id, PayloadHash: "ab" + repeat("0", 62)})
	wantClass(t, err, ErrStateConflict)
	fresh := "00000000-0000-4000-8000-0000000000aa"
	_, err = l.Create(CreateParams{TaskID: fresh, ParentID: fresh, Internal: true})
	wantClass(t, err, ErrTaskNotFound)
	_, err = l.Create(CreateParams{PayloadHash: repeat("A", 64), Internal: true})
	wantClass(t, err, ErrInvalidInput)
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err = l.Create(timeoutSeconds(CreateParams{Internal: true}, bad))
		wantClass(t, err, ErrInvalidInput)
	}
	// Unknown id before the code is checked.
	_, err = l.CloseTask(fresh, StatusSucceeded, "NOT VALID")
	wantClass(t, err, ErrTaskNotFound)
	_, err = l.CloseTask(a.ID, "running", "")
	wantClass(t, err, ErrInvalidInput)
	_, err = l.SetDelivery(a.ID, "pending", "")
	wantClass(t, err, ErrInvalidInput)
	_, err = l.Get("not-a-uuid")
	wantClass(t, err, ErrInvalidInput)
	_, err = l.ChildrenOf(fresh)
	wantClass(t, err, ErrTaskNotFound)
}

func repeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}

// TestClockBackwards: every operation refuses a clock earlier than a time
// its task holds with ErrClockBackwards itself, before anything is written
// (not some other conflict, such as the row check a write would fail).
func TestClockBackwards(t *testing.T) {
	l, clk, _ := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	clk.now = 999
	_, err = l.Start(task.ID)
	wantClass(t, err, ErrClockBackwards)
	_, err = l.Create(CreateParams{ParentID: task.ID, Internal: true})
	wantClass(t, err, ErrClockBackwards)
	clk.now = 1005
	if _, err := l.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	clk.now = 1004
	_, err = l.Heartbeat(task.ID)
	wantClass(t, err, ErrClockBackwards)
	_, err = l.CloseTask(task.ID, StatusFailed, "")
	wantClass(t, err, ErrClockBackwards)
	clk.now = 1010
	if _, err := l.CloseTask(task.ID, StatusFailed, "worker_failed"); err != nil {
		t.Fatal(err)
	}
	clk.now = 1009
	_, err = l.SetDelivery(task.ID, DeliveryFailed, "")
	wantClass(t, err, ErrClockBackwards)
	// Reconcile retains a delivery that ended "in the future": no write,
	// no conflict.
	if _, err := l.reconcileFloat(0, 0, false); err != nil {
		t.Fatal(err)
	}
	// A task past its deadline whose heartbeat is newer than now would be
	// timed out backwards in time: refused, in a dry run too.
	clk.now = 1100
	busy, _ := l.Create(timeoutSeconds(CreateParams{}, 0))
	l.Start(busy.ID)
	clk.now = 1200
	l.Heartbeat(busy.ID)
	clk.now = 1150
	_, err = l.reconcileFloat(600, 600, true)
	wantClass(t, err, ErrClockBackwards)
	_, err = l.reconcileFloat(600, 600, false)
	wantClass(t, err, ErrClockBackwards)
	healthy(t, l)
}

// TestStartDeadlineOverflow: at a clock where now + timeout is not a
// finite float, start is a StateConflict that writes nothing, and the
// ledger stays readable and healthy.
func TestStartDeadlineOverflow(t *testing.T) {
	l, clk, p := openTest(t)
	clk.now = 1.7e308
	task, err := l.Create(timeoutSeconds(CreateParams{}, 1e308))
	if err != nil {
		t.Fatal(err)
	}
	before := fileSHA(t, p+"-wal")
	_, err = l.Start(task.ID)
	wantClass(t, err, ErrStateConflict)
	if fileSHA(t, p+"-wal") != before {
		t.Fatal("a refused start wrote")
	}
	got, err := l.Get(task.ID)
	if err != nil || got.Status != StatusQueued || got.Version != 0 || got.DeadlineAt != nil {
		t.Fatalf("%+v %v", got, err)
	}
	healthy(t, l)
	// The largest finite deadline is still written.
	clk.now = 0
	edge, err := l.Create(timeoutSeconds(CreateParams{Internal: true}, math.MaxFloat64))
	if err != nil {
		t.Fatal(err)
	}
	if edge, err = l.Start(edge.ID); err != nil || *row(edge).DeadlineAt != math.MaxFloat64 || !edge.DeadlineAt.Equal(latestInstant) {
		t.Fatalf("%+v %v", edge, err)
	}
}

func TestParseTaskID(t *testing.T) {
	const canon = "7a5c0001-0000-4000-8000-0000000000ff"
	for _, in := range []string{
		canon, "7A5C0001-0000-4000-8000-0000000000FF", "7a5c0001000040008000" + "0000000000ff",
		"{" + canon + "}", "urn:uuid:" + canon, "{7a5c00010000400080000000000000ff}",
	} {
		got, err := ParseTaskID(in)
		if err != nil || got != canon {
			t.Errorf("ParseTaskID(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{
		"", " " + canon, canon + " ", "0x7a5c00010000400080000000000000ff", "7a5c0001_0000_4000_8000_0000000000ff",
		"+7a5c00010000400080000000000000f", "7a5c-0001-0000-4000-80000000000000ff", "{" + canon, "URN:UUID:" + canon,
		"7a5c0001-0000-4000-8000-0000000000fg", "7a5c0001-0000-4000-8000-0000000000ｆｆ", "urn:uuid:{" + canon + "}",
	} {
		if _, err := ParseTaskID(in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("ParseTaskID(%q) accepted", in)
		}
	}
}

func TestReadOnlyRefusesMutations(t *testing.T) {
	l, _, p := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	ro, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(2000)})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	before := fileSHA(t, p)
	checks := []error{}
	_, err = ro.Create(CreateParams{Internal: true})
	checks = append(checks, err)
	_, err = ro.Start(task.ID)
	checks = append(checks, err)
	_, err = ro.Heartbeat(task.ID)
	checks = append(checks, err)
	_, err = ro.CloseTask(task.ID, StatusFailed, "")
	checks = append(checks, err)
	_, err = ro.SetDelivery(task.ID, DeliveryFailed, "")
	checks = append(checks, err)
	_, err = ro.reconcileFloat(600, 600, false)
	checks = append(checks, err)
	for i, err := range checks {
		if !errors.Is(err, ErrStateConflict) {
			t.Errorf("mutation %d on read-only: %v", i, err)
		}
	}
	got, err := ro.Get(task.ID)
	if err != nil || got.ID != task.ID {
		t.Fatalf("read-only get: %v", err)
	}
	if rep, err := ro.reconcileFloat(600, 600, true); err != nil || rep.ActiveExamined != 1 {
		t.Fatalf("read-only dry run: %+v %v", rep, err)
	}
	if fileSHA(t, p) != before {
		t.Errorf("read-only ledger changed the file")
	}
}

// TestReconcileApplyMatchesDryRun runs the README demo's shape: one queued
// task, one stale running task, a delivery-required and an internal task
// past delivery grace.
func TestReconcileApplyMatchesDryRun(t *testing.T) {
	l, clk, _ := openTest(t)
	mk := func(required bool) Task {
		task, err := l.Create(CreateParams{Internal: !required})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	mk(true)
	stale := mk(true)
	done := mk(true)
	internalTask := mk(false)
	for _, id := range []string{stale.ID, done.ID, internalTask.ID} {
		if _, err := l.Start(id); err != nil {
			t.Fatal(err)
		}
	}
	clk.now = 1100
	l.CloseTask(done.ID, StatusSucceeded, "completed")
	l.CloseTask(internalTask.ID, StatusSucceeded, "")
	clk.now = 5000
	preview, err := l.reconcileFloat(600, 600, true)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := l.reconcileFloat(600, 600, false)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"active_examined":2,"applied":%v,"deliveries_failed":1,"deliveries_not_applicable":1,"dry_run":%v,"fresh_active_retained":1,"pending_delivery_examined":3,"pending_delivery_retained":1,"tasks_timed_out":1}`
	if got := reconcileJSON(preview); got != fmt.Sprintf(want, false, true) {
		t.Errorf("preview %s", got)
	}
	if got := reconcileJSON(applied); got != fmt.Sprintf(want, true, false) {
		t.Errorf("apply %s", got)
	}
	again, err := l.reconcileFloat(600, 600, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := reconcileJSON(again); got != `{"active_examined":1,"applied":true,"deliveries_failed":0,"deliveries_not_applicable":0,"dry_run":false,"fresh_active_retained":1,"pending_delivery_examined":1,"pending_delivery_retained":1,"tasks_timed_out":0}` {
		t.Errorf("recheck %s", got)
	}
	healthy(t, l)
}

// TestReadTransactionsAreQueryOnly: every read transaction (get, children,
// doctor, the dry run) runs under query_only, so a write slipped into one
// fails and changes nothing, and the ledger writes normally afterwards.
func TestReadTransactionsAreQueryOnly(t *testing.T) {
	l, _, _ := openTest(t)
	for _, gated := range []bool{true, false} {
		err := l.lockedReadTx(context.Background(), "test", gated, func(tx *txn) error {
			_, err := tx.ExecContext(tx.ctx, `INSERT INTO schema_meta (key, value) VALUES ('x', 'y')`)
			return err
		})
		if err == nil {
			t.Fatalf("gated %v: a write inside a read transaction succeeded", gated)
		}
	}
	var n int
	if err := l.conn.QueryRowContext(t.Context(), "SELECT count(*) FROM schema_meta").Scan(&n); err != nil || n != 2 {
		t.Fatalf("schema_meta rows %d, %v", n, err)
	}
	if _, err := l.Create(CreateParams{Internal: true}); err != nil {
		t.Fatalf("write after a read transaction: %v", err)
	}
	healthy(t, l)
}

// The zero CreateParams is the command line's default task: delivery
// required. Internal asks for the other kind.
func TestCreateParamsZeroValueRequiresDelivery(t *testing.T) {
	l, _, _ := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil || !task.DeliveryRequired {
		t.Fatalf("zero value: required=%v %v", task.DeliveryRequired, err)
	}
	internal, err := l.Create(CreateParams{Internal: true})
	if err != nil || internal.DeliveryRequired {
		t.Fatalf("Internal: required=%v %v", internal.DeliveryRequired, err)
	}
}

// TestChildrenOfLeafIsEmptyNotNil: a task without children has an empty,
// non-nil slice of them, which encodes as [] (not null) in JSON, on a
// writable and a read-only ledger.
func TestChildrenOfLeafIsEmptyNotNil(t *testing.T) {
	l, _, p := openTest(t)
	leaf, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := l.ChildrenOf(leaf.ID)
	if err != nil || kids == nil || len(kids) != 0 {
		t.Fatalf("writable: %#v, %v; want an empty, non-nil slice", kids, err)
	}
	l.Close()
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	kids, err = r.ChildrenOf(leaf.ID)
	if err != nil || kids == nil || len(kids) != 0 {
		t.Fatalf("read-only: %#v, %v; want an empty, non-nil slice", kids, err)
	}
}
