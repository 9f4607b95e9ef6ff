package ledger_test

import (
	"fmt"
	"reflect"
	"testing"

	model "github.com/stateguard/stateguard/model/ledger"
)

// base is 2001-01-01T00:00:00Z, the origin of every time in small-v2.
const base = 978307200.0

func at(offset float64) float64 { return base + offset }

// fixtureID is the small-v2 id of task number n (T01..T12).
func fixtureID(n int) string {
	return fmt.Sprintf("7a5c00%02x-0000-4000-8000-0000000000%02x", n, n)
}

func f64(v float64) *float64 { return &v }

const hashA = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
const hashB = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// mustTask fails the test on an operation error.
func mustTask(t *testing.T) func(model.Task, error) model.Task {
	return func(v model.Task, err error) model.Task {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

// mustReport fails the test on a reconcile error.
func mustReport(t *testing.T) func(model.ReconcileReport, error) model.ReconcileReport {
	return func(v model.ReconcileReport, err error) model.ReconcileReport {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

// buildSmallV2 replays, through the model, the history that wrote the
// reference fixture small-v2.sqlite (see fixtures/ledger/README.md).
func buildSmallV2(t *testing.T) *model.Model {
	t.Helper()
	m := &model.Model{}
	create := func(n, parent int, hash string, timeout *float64, required bool, when float64) {
		p := model.CreateParams{TaskID: fixtureID(n), PayloadHash: hash, TimeoutSeconds: timeout, DeliveryRequired: required}
		if parent != 0 {
			p.ParentID = fixtureID(parent)
		}
		mustTask(t)(m.Create(p, at(when)))
	}
	start := func(n int, when float64) { mustTask(t)(m.Start(fixtureID(n), at(when))) }
	closeT := func(n int, st, code string, when float64) { mustTask(t)(m.Close(fixtureID(n), st, code, at(when))) }
	deliver := func(n int, st, code string, when float64) {
		mustTask(t)(m.SetDelivery(fixtureID(n), st, code, at(when)))
	}
	create(1, 0, "", f64(3600), true, 0)
	start(1, 10)
	create(2, 1, hashA, nil, false, 20)
	create(3, 1, "", nil, false, 25)
	start(2, 30)
	create(4, 2, "", f64(0.5), false, 35)
	start(4, 36)
	closeT(3, "cancelled", "caller_cancelled", 40)
	closeT(4, "failed", "worker_failed", 50)
	closeT(2, "succeeded", "worker_completed", 60)
	deliver(2, "not_applicable", "internal_task", 70)
	closeT(1, "succeeded", "completed", 100)
	deliver(1, "delivered", "transport_acknowledged", 110.25)
	create(5, 0, "", f64(30), true, 200)
	start(5, 201)
	create(6, 0, hashB, nil, true, 205)
	start(6, 206)
	mustTask(t)(m.Heartbeat(fixtureID(6), at(210.5)))
	create(7, 0, "", nil, true, 300)
	start(7, 301)
	closeT(7, "succeeded", "", 302)
	deliver(7, "delivered", "", 303)
	create(8, 0, "", f64(900), true, 400)
	start(8, 401)
	closeT(8, "failed", "worker_failed", 402)
	deliver(8, "failed", "transport_failed", 403)
	rep := mustReport(t)(m.Reconcile(at(1000), 600, 86400, false))
	if rep.TasksTimedOut != 2 || rep.DeliveriesFailed+rep.DeliveriesNotApplicable != 0 {
		t.Fatalf("reconcile at B+1000: %+v", rep)
	}
	rep = mustReport(t)(m.Reconcile(at(1100), 600, 1055, false))
	if rep.TasksTimedOut != 0 || rep.DeliveriesNotApplicable != 1 || rep.DeliveriesFailed != 0 {
		t.Fatalf("reconcile at B+1100: %+v", rep)
	}
	deliver(5, "failed", "delivery_grace_expired", 1200)
	create(9, 0, "", f64(1e10), true, 1300)
	start(9, 1301)
	mustTask(t)(m.Heartbeat(fixtureID(9), at(1302.1)))
	create(10, 0, "", nil, true, 1400)
	create(11, 10, "", nil, false, 1500)
	create(12, 0, "", f64(0), true, 1600)
	start(12, 1601)
	return m
}

type fixtureEvent struct {
	task           int
	kind, from, to string
	offset         float64
	code           string
}

// smallV2Events is task_events of small-v2.sqlite, dumped with sqlite3.
var smallV2Events = []fixtureEvent{
	{1, "created", "", "queued", 0.0, "created"},
	{1, "task_transition", "queued", "running", 10.0, "started"},
	{2, "created", "", "queued", 20.0, "created"},
	{3, "created", "", "queued", 25.0, "created"},
	{2, "task_transition", "queued", "running", 30.0, "started"},
	{4, "created", "", "queued", 35.0, "created"},
	{4, "task_transition", "queued", "running", 36.0, "started"},
	{3, "task_transition", "queued", "cancelled", 40.0, "caller_cancelled"},
	{4, "task_transition", "running", "failed", 50.0, "worker_failed"},
	{2, "task_transition", "running", "succeeded", 60.0, "worker_completed"},
	{2, "delivery_transition", "pending", "not_applicable", 70.0, "internal_task"},
	{1, "task_transition", "running", "succeeded", 100.0, "completed"},
	{1, "delivery_transition", "pending", "delivered", 110.25, "transport_acknowledged"},
	{5, "created", "", "queued", 200.0, "created"},
	{5, "task_transition", "queued", "running", 201.0, "started"},
	{6, "created", "", "queued", 205.0, "created"},
	{6, "task_transition", "queued", "running", 206.0, "started"},
	{7, "created", "", "queued", 300.0, "created"},
	{7, "task_transition", "queued", "running", 301.0, "started"},
	{7, "task_transition", "running", "succeeded", 302.0, ""},
	{7, "delivery_transition", "pending", "delivered", 303.0, ""},
	{8, "created", "", "queued", 400.0, "created"},
	{8, "task_transition", "queued", "running", 401.0, "started"},
	{8, "task_transition", "running", "failed", 402.0, "worker_failed"},
	{8, "delivery_transition", "pending", "failed", 403.0, "transport_failed"},
	{5, "task_transition", "running", "timed_out", 1000.0, "deadline_exceeded"},
	{6, "task_transition", "running", "timed_out", 1000.0, "restart_stale"},
	{3, "delivery_transition", "pending", "not_applicable", 1100.0, "internal_task"},
	{5, "delivery_transition", "pending", "failed", 1200.0, "delivery_grace_expired"},
	{9, "created", "", "queued", 1300.0, "created"},
	{9, "task_transition", "queued", "running", 1301.0, "started"},
	{10, "created", "", "queued", 1400.0, "created"},
	{11, "created", "", "queued", 1500.0, "created"},
	{12, "created", "", "queued", 1600.0, "created"},
	{12, "task_transition", "queued", "running", 1601.0, "started"},
}

// smallV2Rows is the tasks table of small-v2.sqlite (status, codes, version).
var smallV2Rows = map[int]struct {
	status, delivery, code, dcode string
	version                       int64
}{
	1:  {"succeeded", "delivered", "completed", "transport_acknowledged", 3},
	2:  {"succeeded", "not_applicable", "worker_completed", "internal_task", 3},
	3:  {"cancelled", "not_applicable", "caller_cancelled", "internal_task", 2},
	4:  {"failed", "pending", "worker_failed", "", 2},
	5:  {"timed_out", "failed", "deadline_exceeded", "delivery_grace_expired", 3},
	6:  {"timed_out", "pending", "restart_stale", "", 3},
	7:  {"succeeded", "delivered", "", "", 3},
	8:  {"failed", "failed", "worker_failed", "transport_failed", 3},
	9:  {"running", "pending", "", "", 2},
	10: {"queued", "pending", "", "", 0},
	11: {"queued", "pending", "", "", 0},
	12: {"running", "pending", "", "", 1},
}

// sameRows reports whether two models hold identical tasks and events.
func sameRows(a, b *model.Model) bool {
	return reflect.DeepEqual(a.Tasks(), b.Tasks()) && reflect.DeepEqual(a.Events(), b.Events())
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func TestSmallV2ReplayMatchesReferenceRows(t *testing.T) {
	m := buildSmallV2(t)
	events := m.Events()
	if len(events) != len(smallV2Events) {
		t.Fatalf("events: got %d, want %d", len(events), len(smallV2Events))
	}
	for i, e := range events {
		w := smallV2Events[i]
		got := fixtureEvent{0, e.Kind, strOr(e.From), e.To, e.OccurredAt - base, strOr(e.Code)}
		want := w
		want.task = 0
		if e.TaskID != fixtureID(w.task) || got != want || e.Sequence != int64(i+1) {
			t.Errorf("event %d: got %s %+v seq %d, want %+v", i+1, e.TaskID, got, e.Sequence, w)
		}
	}
	for _, task := range m.Tasks() {
		var n int
		fmt.Sscanf(task.ID[6:8], "%x", &n)
		w := smallV2Rows[n]
		if task.Status != w.status || task.DeliveryStatus != w.delivery || strOr(task.TerminalCode) != w.code ||
			strOr(task.DeliveryCode) != w.dcode || task.Version != w.version {
			t.Errorf("T%02d: got %+v, want %+v", n, task, w)
		}
	}
	t9 := mustTask(t)(m.Get(fixtureID(9)))
	if t9.UpdatedAt != 978308502.1 || *t9.DeadlineAt != at(1301)+1e10 {
		t.Errorf("T09 times: updated %v deadline %v", t9.UpdatedAt, *t9.DeadlineAt)
	}
	c := model.Check(m.Tasks(), m.Events())
	if !c.Healthy() || c.TaskCount != 12 || c.EventCount != 35 {
		t.Errorf("check: %+v", c)
	}
	wantStatus := map[string]int{"cancelled": 1, "failed": 2, "queued": 2, "running": 2, "succeeded": 3, "timed_out": 2}
	wantDelivery := map[string]int{"delivered": 2, "failed": 2, "not_applicable": 2, "pending": 6}
	if fmt.Sprint(c.TaskStatusCounts) != fmt.Sprint(wantStatus) || fmt.Sprint(c.DeliveryStatusCounts) != fmt.Sprint(wantDelivery) {
		t.Errorf("status counts: %v %v", c.TaskStatusCounts, c.DeliveryStatusCounts)
	}
}

// TestSmallV2DryRuns checks the three recorded dry runs (small-v2.expected.json)
// at clocks between 2001 and 2317.
func TestSmallV2DryRuns(t *testing.T) {
	cases := []struct {
		active, delivery float64
		want             model.ReconcileReport
	}{
		{600, 600, model.ReconcileReport{ActiveExamined: 4, TasksTimedOut: 2, FreshActiveRetained: 2, PendingDeliveryExamined: 4, DeliveriesFailed: 1, DeliveriesNotApplicable: 1, PendingDeliveryRetained: 2, DryRun: true}},
		{0, 0, model.ReconcileReport{ActiveExamined: 4, TasksTimedOut: 2, FreshActiveRetained: 2, PendingDeliveryExamined: 4, DeliveriesFailed: 3, DeliveriesNotApplicable: 1, PendingDeliveryRetained: 0, DryRun: true}},
		{1e10, 1e10, model.ReconcileReport{ActiveExamined: 4, TasksTimedOut: 1, FreshActiveRetained: 3, PendingDeliveryExamined: 3, PendingDeliveryRetained: 3, DryRun: true}},
	}
	m := buildSmallV2(t)
	before := m.Clone()
	// Every time in small-v2 lies in 2001; T09's deadline is in 2317, but a
	// 1e10 s grace also expires T04's delivery near 2317, so stay below 2300.
	for _, now := range []float64{at(1e6), 1.7e9, 1.8e9, 5e9} {
		for _, c := range cases {
			got, err := m.Reconcile(now, c.active, c.delivery, true)
			if err != nil || got != c.want {
				t.Errorf("now %v graces %v/%v: got %+v %v, want %+v", now, c.active, c.delivery, got, err, c.want)
			}
		}
	}
	if !sameRows(before, m) {
		t.Errorf("dry runs changed the model")
	}
}

// demoLedger is the README's synthetic sample: one queued task, one stale
// running task, one delivery-required and one internal terminal task whose
// delivery grace has passed.
func demoLedger(t *testing.T, now float64) *model.Model {
	m := &model.Model{}
	id := func(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", n) }
	mustTask(t)(m.Create(model.CreateParams{TaskID: id(1), DeliveryRequired: true}, now-200000))
	mustTask(t)(m.Close(id(1), "succeeded", "worker_completed", now-100000))
	mustTask(t)(m.Create(model.CreateParams{TaskID: id(2)}, now-200000))
	mustTask(t)(m.Close(id(2), "succeeded", "completed", now-100000))
	mustTask(t)(m.Create(model.CreateParams{TaskID: id(3), DeliveryRequired: true}, now-5000))
	mustTask(t)(m.Start(id(3), now-4990))
	mustTask(t)(m.Create(model.CreateParams{TaskID: id(4), DeliveryRequired: true}, now-10))
	return m
}

func TestDemoReconcile(t *testing.T) {
	const now = 1.7e9
	m := demoLedger(t, now)
	first := model.ReconcileReport{ActiveExamined: 2, TasksTimedOut: 1, FreshActiveRetained: 1, PendingDeliveryExamined: 3, DeliveriesFailed: 1, DeliveriesNotApplicable: 1, PendingDeliveryRetained: 1}
	preview := first
	preview.DryRun = true
	apply := first
	apply.Applied = true
	recheck := model.ReconcileReport{ActiveExamined: 1, FreshActiveRetained: 1, PendingDeliveryExamined: 1, PendingDeliveryRetained: 1, Applied: true}
	for i, step := range []struct {
		dry  bool
		want model.ReconcileReport
	}{{true, preview}, {false, apply}, {false, recheck}} {
		got, err := m.Reconcile(now, 600, 86400, step.dry)
		if err != nil || got != step.want {
			t.Fatalf("step %d: got %+v %v, want %+v", i, got, err, step.want)
		}
	}
	c := model.Check(m.Tasks(), m.Events())
	if !c.Healthy() || c.TaskCount != 4 || c.EventCount != 10 {
		t.Fatalf("check after demo: %+v", c)
	}
	want := "map[delivered:0 failed:1 not_applicable:1 pending:2] map[cancelled:0 failed:0 queued:1 running:0 succeeded:2 timed_out:1]"
	if got := fmt.Sprint(c.DeliveryStatusCounts, " ", c.TaskStatusCounts); got != want {
		t.Fatalf("counts: %s", got)
	}
}
