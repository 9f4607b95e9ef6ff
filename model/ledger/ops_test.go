package ledger_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	model "github.com/stateguard/stateguard/model/ledger"
)

const (
	idA = "aaaaaaaa-0000-4000-8000-00000000000a"
	idB = "bbbbbbbb-0000-4000-8000-00000000000b"
	idX = "cccccccc-0000-4000-8000-00000000000c" // never created
)

// errClass names the class an error wraps, or "ok".
func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, model.ErrInvalidInput):
		return "InvalidInput"
	case errors.Is(err, model.ErrTaskNotFound):
		return "TaskNotFound"
	case errors.Is(err, model.ErrStateConflict):
		return "StateConflict"
	}
	return "unclassified: " + err.Error()
}

// inState returns a model holding idA (delivery required unless internal)
// brought to the given task state at times 100.. (queued at 100, started at
// 110, closed at 120); a terminal state reached "via queued" skips the start.
func inState(t *testing.T, status string, viaRunning, internal bool) *model.Model {
	t.Helper()
	m := &model.Model{}
	mustTask(t)(m.Create(model.CreateParams{TaskID: idA, DeliveryRequired: !internal, TimeoutSeconds: f64(30)}, 100))
	if status == model.StatusRunning || (status != model.StatusQueued && viaRunning) {
		mustTask(t)(m.Start(idA, 110))
	}
	if model.TaskMachine.IsTerminal(status) {
		mustTask(t)(m.Close(idA, status, "", 120))
	}
	return m
}

func TestTaskTransitions(t *testing.T) {
	terminals := model.TaskMachine.Terminal
	type op struct {
		name string
		run  func(m *model.Model, now float64) (model.Task, error)
	}
	ops := []op{{"start", func(m *model.Model, now float64) (model.Task, error) { return m.Start(idA, now) }},
		{"heartbeat", func(m *model.Model, now float64) (model.Task, error) { return m.Heartbeat(idA, now) }}}
	for _, s := range terminals {
		ops = append(ops, op{"close " + s, func(m *model.Model, now float64) (model.Task, error) { return m.Close(idA, s, "", now) }})
	}
	type from struct {
		status     string
		viaRunning bool
	}
	froms := []from{{model.StatusQueued, false}, {model.StatusRunning, true}}
	for _, s := range terminals {
		froms = append(froms, from{s, false}, from{s, true})
	}
	for _, f := range froms {
		for _, o := range ops {
			name := fmt.Sprintf("%s(via running %v)/%s", f.status, f.viaRunning, o.name)
			t.Run(name, func(t *testing.T) {
				m := inState(t, f.status, f.viaRunning, false)
				before := mustTask(t)(m.Get(idA))
				events := len(m.Events())
				got, err := o.run(m, 200)
				wantClass, wantStatus, mutates := expectTransition(f.status, o.name)
				if errClass(err) != wantClass {
					t.Fatalf("class: got %s, want %s", errClass(err), wantClass)
				}
				if err != nil {
					if !sameRows(inState(t, f.status, f.viaRunning, false), m) {
						t.Fatal("a refused operation changed the model")
					}
					return
				}
				if got.Status != wantStatus {
					t.Fatalf("status: got %s, want %s", got.Status, wantStatus)
				}
				wantVersion := before.Version
				wantEvents := events
				if mutates {
					wantVersion++
					if o.name != "heartbeat" {
						wantEvents++
					}
				}
				if got.Version != wantVersion || len(m.Events()) != wantEvents {
					t.Fatalf("version %d events %d, want %d %d", got.Version, len(m.Events()), wantVersion, wantEvents)
				}
				if c := model.Check(m.Tasks(), m.Events()); !c.Healthy() {
					t.Fatalf("unhealthy after %s: %+v", name, c)
				}
			})
		}
	}
}

// expectTransition is the transition table written out by hand: the class,
// the resulting status and whether the row changes.
func expectTransition(status, op string) (class, result string, mutates bool) {
	terminal := status != model.StatusQueued && status != model.StatusRunning
	switch {
	case op == "start" && status == model.StatusQueued:
		return "ok", model.StatusRunning, true
	case op == "start" && status == model.StatusRunning:
		return "ok", model.StatusRunning, false
	case op == "start":
		return "StateConflict", "", false
	case op == "heartbeat" && status == model.StatusRunning:
		return "ok", model.StatusRunning, true
	case op == "heartbeat":
		return "StateConflict", "", false
	}
	target := op[len("close "):]
	switch {
	case !terminal:
		return "ok", target, true
	case target == status:
		return "ok", status, false
	}
	return "StateConflict", "", false
}

func TestStartSetsDeadline(t *testing.T) {
	for _, timeout := range []float64{0, 0.5, 30, 1e10, 1e308} {
		m := &model.Model{}
		mustTask(t)(m.Create(model.CreateParams{TaskID: idA, TimeoutSeconds: f64(timeout)}, 100))
		got := mustTask(t)(m.Start(idA, 110.25))
		if got.DeadlineAt == nil || *got.DeadlineAt != 110.25+timeout || *got.StartedAt != 110.25 || got.UpdatedAt != 110.25 {
			t.Errorf("timeout %v: %+v", timeout, got)
		}
	}
	m := &model.Model{}
	mustTask(t)(m.Create(model.CreateParams{TaskID: idA}, 100))
	if got := mustTask(t)(m.Start(idA, 110)); got.DeadlineAt != nil {
		t.Errorf("deadline without timeout: %v", *got.DeadlineAt)
	}
}

// TestStartDeadlineOverflow: a start whose deadline (now + timeout) is
// not a finite float is a StateConflict that changes nothing; the same
// task starts once the sum fits.
func TestStartDeadlineOverflow(t *testing.T) {
	m := &model.Model{}
	mustTask(t)(m.Create(model.CreateParams{TaskID: idA, TimeoutSeconds: f64(1e308)}, 1.7e308))
	before := m.Clone()
	_, err := m.Start(idA, 1.7e308)
	if errClass(err) != "StateConflict" {
		t.Fatalf("start: %v", err)
	}
	if !reflect.DeepEqual(m.Tasks(), before.Tasks()) || !reflect.DeepEqual(m.Events(), before.Events()) {
		t.Fatal("a refused start changed the model")
	}
	m = &model.Model{}
	mustTask(t)(m.Create(model.CreateParams{TaskID: idA, TimeoutSeconds: f64(math.MaxFloat64)}, 0))
	if got := mustTask(t)(m.Start(idA, 0)); *got.DeadlineAt != math.MaxFloat64 {
		t.Fatalf("deadline %v", *got.DeadlineAt)
	}
}

func TestDeliveryTransitions(t *testing.T) {
	for _, internal := range []bool{false, true} {
		for _, taskStatus := range model.TaskMachine.States {
			for _, target := range model.DeliveryMachine.Terminal {
				name := fmt.Sprintf("internal=%v/%s/%s", internal, taskStatus, target)
				t.Run(name, func(t *testing.T) {
					m := inState(t, taskStatus, true, internal)
					got, err := m.SetDelivery(idA, target, "", 200)
					want := "ok"
					switch {
					case !model.TaskMachine.IsTerminal(taskStatus):
						want = "StateConflict"
					case internal != (target == model.DeliveryNotApplicable):
						want = "StateConflict"
					}
					if errClass(err) != want {
						t.Fatalf("got %s, want %s", errClass(err), want)
					}
					if err != nil {
						return
					}
					if got.DeliveryStatus != target || got.DeliveryUpdatedAt != 200 || got.UpdatedAt != 120 {
						t.Fatalf("row: %+v", got)
					}
					// Same value again: idempotent, even with a junk code.
					again, err := m.SetDelivery(idA, target, "Not A Code", 300)
					if err != nil || again.Version != got.Version || again.DeliveryUpdatedAt != 200 {
						t.Fatalf("repeat: %+v %v", again, err)
					}
					for _, other := range model.DeliveryMachine.Terminal {
						if other != target {
							if _, err := m.SetDelivery(idA, other, "", 300); errClass(err) != "StateConflict" {
								t.Fatalf("different delivery %s: %v", other, err)
							}
						}
					}
				})
			}
		}
	}
}

func TestCreate(t *testing.T) {
	m := &model.Model{}
	a := mustTask(t)(m.Create(model.CreateParams{TaskID: idA, PayloadHash: hashA, TimeoutSeconds: f64(5), DeliveryRequired: true}, 100))
	if a.Status != "queued" || a.DeliveryStatus != "pending" || a.Version != 0 || a.CreatedAt != 100 || a.UpdatedAt != 100 || a.DeliveryUpdatedAt != 100 {
		t.Fatalf("new row: %+v", a)
	}
	same := model.CreateParams{TaskID: idA, PayloadHash: hashA, TimeoutSeconds: f64(5), DeliveryRequired: true}
	cases := []struct {
		name string
		p    model.CreateParams
		now  float64
		want string
	}{
		{"identical repeat later", same, 500, "ok"},
		{"identical repeat with clock behind", same, 1, "ok"},
		{"different hash", model.CreateParams{TaskID: idA, PayloadHash: hashB, TimeoutSeconds: f64(5), DeliveryRequired: true}, 500, "StateConflict"},
		{"no hash", model.CreateParams{TaskID: idA, TimeoutSeconds: f64(5), DeliveryRequired: true}, 500, "StateConflict"},
		{"different timeout", model.CreateParams{TaskID: idA, PayloadHash: hashA, TimeoutSeconds: f64(6), DeliveryRequired: true}, 500, "StateConflict"},
		{"no timeout", model.CreateParams{TaskID: idA, PayloadHash: hashA, DeliveryRequired: true}, 500, "StateConflict"},
		{"internal", model.CreateParams{TaskID: idA, PayloadHash: hashA, TimeoutSeconds: f64(5)}, 500, "StateConflict"},
		{"with parent", model.CreateParams{TaskID: idA, ParentID: idB, PayloadHash: hashA, TimeoutSeconds: f64(5), DeliveryRequired: true}, 500, "StateConflict"},
		{"own id as parent, existing", model.CreateParams{TaskID: idA, ParentID: idA}, 500, "StateConflict"},
		{"own id as parent, new", model.CreateParams{TaskID: idB, ParentID: idB}, 500, "TaskNotFound"},
		{"unknown parent", model.CreateParams{TaskID: idB, ParentID: idX}, 500, "TaskNotFound"},
		{"parent created later than now", model.CreateParams{TaskID: idB, ParentID: idA}, 99, "StateConflict"},
		{"malformed id", model.CreateParams{TaskID: "not-a-uuid"}, 500, "InvalidInput"},
		{"upper-case id (model takes canonical ids only)", model.CreateParams{TaskID: "AAAAAAAA-0000-4000-8000-00000000000A"}, 500, "InvalidInput"},
		{"malformed parent", model.CreateParams{TaskID: idB, ParentID: "x"}, 500, "InvalidInput"},
		{"malformed hash", model.CreateParams{TaskID: idB, PayloadHash: "not-a-hash"}, 500, "InvalidInput"},
		{"upper-case hash", model.CreateParams{TaskID: idB, PayloadHash: "AA" + hashA[2:]}, 500, "InvalidInput"},
		{"negative timeout", model.CreateParams{TaskID: idB, TimeoutSeconds: f64(-1)}, 500, "InvalidInput"},
		{"NaN timeout", model.CreateParams{TaskID: idB, TimeoutSeconds: f64(math.NaN())}, 500, "InvalidInput"},
		{"infinite timeout", model.CreateParams{TaskID: idB, TimeoutSeconds: f64(math.Inf(1))}, 500, "InvalidInput"},
		{"malformed id before existing-id check", model.CreateParams{TaskID: idA, PayloadHash: "zz"}, 500, "InvalidInput"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m2 := m.Clone()
			got, err := m2.Create(c.p, c.now)
			if errClass(err) != c.want {
				t.Fatalf("got %s (%v), want %s", errClass(err), err, c.want)
			}
			if err != nil && !sameRows(m, m2) {
				t.Fatal("a refused create changed the model")
			}
			if err == nil && c.p.TaskID == idA && (got.Version != 0 || len(m2.Events()) != 1) {
				t.Fatalf("idempotent create changed the row: %+v", got)
			}
		})
	}
	child := mustTask(t)(m.Create(model.CreateParams{TaskID: idB, ParentID: idA, TimeoutSeconds: f64(math.Copysign(0, -1))}, 100))
	if *child.ParentID != idA || math.Signbit(*child.TimeoutSeconds) {
		t.Fatalf("child: %+v", child)
	}
	kids := mustTask2(t)(m.ChildrenOf(idA))
	if len(kids) != 1 || kids[0].ID != idB {
		t.Fatalf("children: %+v", kids)
	}
	if _, err := m.ChildrenOf(idX); errClass(err) != "TaskNotFound" {
		t.Fatalf("children of unknown: %v", err)
	}
}

func mustTask2(t *testing.T) func([]model.Task, error) []model.Task {
	return func(v []model.Task, err error) []model.Task {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

func TestChildrenOrder(t *testing.T) {
	m := &model.Model{}
	mustTask(t)(m.Create(model.CreateParams{TaskID: idX}, 1))
	ids := []string{idB, idA, "00000000-0000-4000-8000-000000000001"}
	times := []float64{5, 5, 3}
	for i, id := range ids {
		mustTask(t)(m.Create(model.CreateParams{TaskID: id, ParentID: idX}, times[i]))
	}
	kids := mustTask2(t)(m.ChildrenOf(idX))
	got := fmt.Sprint(kids[0].ID, kids[1].ID, kids[2].ID)
	if want := fmt.Sprint(ids[2], idA, idB); got != want {
		t.Fatalf("order: %s", got)
	}
}

// TestOrderOfChecks pins the order of checks of spec/task-state-guard.md §6.
func TestOrderOfChecks(t *testing.T) {
	succeeded := func(t *testing.T) *model.Model {
		m := inState(t, model.StatusSucceeded, true, false)
		mustTask(t)(m.Close(idA, model.StatusSucceeded, "", 120))
		return m
	}
	cases := []struct {
		name string
		run  func(t *testing.T) error
		want string
	}{
		{"identical close with unregistered code", func(t *testing.T) error {
			_, err := succeeded(t).Close(idA, "succeeded", "bogus_code", 200)
			return err
		}, "ok"},
		{"identical close with malformed code", func(t *testing.T) error {
			_, err := succeeded(t).Close(idA, "succeeded", "Bad Code!", 200)
			return err
		}, "ok"},
		{"identical close with clock behind", func(t *testing.T) error {
			_, err := succeeded(t).Close(idA, "succeeded", "", 1)
			return err
		}, "ok"},
		{"unknown id before code", func(t *testing.T) error {
			_, err := succeeded(t).Close(idX, "succeeded", "bogus_code", 200)
			return err
		}, "TaskNotFound"},
		{"unknown id delivery before code", func(t *testing.T) error {
			_, err := succeeded(t).SetDelivery(idX, "delivered", "bogus_code", 200)
			return err
		}, "TaskNotFound"},
		{"close status not terminal", func(t *testing.T) error {
			_, err := succeeded(t).Close(idX, "running", "", 200)
			return err
		}, "InvalidInput"},
		{"delivery status not terminal", func(t *testing.T) error {
			_, err := succeeded(t).SetDelivery(idA, "pending", "", 200)
			return err
		}, "InvalidInput"},
		{"kind forbids delivery state before code", func(t *testing.T) error {
			_, err := succeeded(t).SetDelivery(idA, "not_applicable", "bogus_code", 200)
			return err
		}, "StateConflict"},
		{"code for another state", func(t *testing.T) error {
			_, err := inState(t, "running", true, false).Close(idA, "failed", "worker_completed", 200)
			return err
		}, "InvalidInput"},
		{"different terminal before code", func(t *testing.T) error {
			_, err := succeeded(t).Close(idA, "failed", "bogus_code", 200)
			return err
		}, "StateConflict"},
		{"code before clock", func(t *testing.T) error {
			_, err := inState(t, "running", true, false).Close(idA, "failed", "bogus_code", 1)
			return err
		}, "InvalidInput"},
		{"identical delivery with junk code", func(t *testing.T) error {
			m := succeeded(t)
			mustTask(t)(m.SetDelivery(idA, "failed", "transport_failed", 130))
			_, err := m.SetDelivery(idA, "failed", "???", 1)
			return err
		}, "ok"},
		{"malformed id", func(t *testing.T) error {
			_, err := succeeded(t).Get("{" + idA + "}")
			return err
		}, "InvalidInput"},
		{"heartbeat unknown", func(t *testing.T) error {
			_, err := succeeded(t).Heartbeat(idX, 200)
			return err
		}, "TaskNotFound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := errClass(c.run(t)); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	registered := map[string][]string{
		"task succeeded":          {"completed", "worker_completed"},
		"task failed":             {"worker_failed"},
		"task timed_out":          {"deadline_exceeded", "restart_stale"},
		"task cancelled":          {"caller_cancelled"},
		"delivery delivered":      {"transport_acknowledged"},
		"delivery failed":         {"delivery_grace_expired", "transport_failed"},
		"delivery not_applicable": {"internal_task"},
	}
	all := []string{"created", "started", "bogus", "Completed"}
	for _, codes := range registered {
		all = append(all, codes...)
	}
	for key, codes := range registered {
		var machine, state string
		fmt.Sscan(key, &machine, &state)
		for _, code := range all {
			want := "InvalidInput"
			for _, c := range codes {
				if c == code {
					want = "ok"
				}
			}
			var err error
			if machine == "task" {
				_, err = inState(t, "running", true, false).Close(idA, state, code, 200)
			} else {
				internal := state == model.DeliveryNotApplicable
				_, err = inState(t, "failed", true, internal).SetDelivery(idA, state, code, 200)
			}
			if errClass(err) != want {
				t.Errorf("%s with %q: got %s, want %s", key, code, errClass(err), want)
			}
		}
	}
	syntax := map[string]bool{"a": true, "0": true, "a.b_c-d": true, "": false, "-a": false, ".a": false, "A": false,
		"a b": false, "é": false, string(make([]byte, 65)): false}
	syntax["a"+string(repeat('x', 63))] = true
	syntax["a"+string(repeat('x', 64))] = false
	for code, want := range syntax {
		if model.ValidCodeSyntax(code) != want {
			t.Errorf("ValidCodeSyntax(%q) != %v", code, want)
		}
	}
}

func repeat(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

func TestClockBackwards(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T) error
	}{
		{"start before create", func(t *testing.T) error {
			_, err := inState(t, "queued", false, false).Start(idA, 99)
			return err
		}},
		{"heartbeat before last update", func(t *testing.T) error {
			_, err := inState(t, "running", true, false).Heartbeat(idA, 109)
			return err
		}},
		{"close before start", func(t *testing.T) error {
			_, err := inState(t, "running", true, false).Close(idA, "failed", "", 109.5)
			return err
		}},
		{"close queued before create", func(t *testing.T) error {
			_, err := inState(t, "queued", false, false).Close(idA, "cancelled", "", 50)
			return err
		}},
		{"delivery before end", func(t *testing.T) error {
			_, err := inState(t, "failed", true, false).SetDelivery(idA, "failed", "", 119)
			return err
		}},
		{"child before parent", func(t *testing.T) error {
			_, err := inState(t, "queued", false, false).Create(model.CreateParams{TaskID: idB, ParentID: idA}, 99)
			return err
		}},
		{"reconcile would time out a task heartbeated after now", func(t *testing.T) error {
			m := inState(t, "running", true, false)
			mustTask(t)(m.Heartbeat(idA, 150))
			_, err := m.Reconcile(145, 0, 0, true) // deadline 140 <= 145, but updated 150
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(t)
			if !errors.Is(err, model.ErrClockBackwards) || errClass(err) != "StateConflict" {
				t.Fatalf("got %v", err)
			}
		})
	}
	// Equal times are not backwards.
	m := inState(t, "queued", false, false)
	mustTask(t)(m.Start(idA, 100))
	mustTask(t)(m.Heartbeat(idA, 100))
	mustTask(t)(m.Close(idA, "failed", "", 100))
	mustTask(t)(m.SetDelivery(idA, "failed", "", 100))
}

func TestReconcileBoundaries(t *testing.T) {
	// Running task started at 110 with timeout 30: deadline 140.
	cases := []struct {
		now, active, delivery float64
		status, code          string
		delivery2             string
	}{
		{139.5, 1000, 1000, "running", "", "pending"},
		{140, 1000, 1000, "timed_out", "deadline_exceeded", "pending"},
		{140, 1000, 0, "timed_out", "deadline_exceeded", "failed"},
		{139, 29, 1000, "timed_out", "restart_stale", "pending"}, // updated 110 <= 139-29
		{139, 29.5, 1000, "running", "", "pending"},
	}
	for _, c := range cases {
		m := inState(t, "running", true, false)
		preview, err := m.Reconcile(c.now, c.active, c.delivery, true)
		if err != nil {
			t.Fatal(err)
		}
		applied := mustReport(t)(m.Reconcile(c.now, c.active, c.delivery, false))
		preview.DryRun, preview.Applied = false, true
		if preview != applied {
			t.Errorf("%+v: preview %+v apply %+v", c, preview, applied)
		}
		got := mustTask(t)(m.Get(idA))
		if got.Status != c.status || strOr(got.TerminalCode) != c.code || got.DeliveryStatus != c.delivery2 {
			t.Errorf("%+v: got %+v", c, got)
		}
		wantVersion := int64(1)
		if c.status == "timed_out" {
			wantVersion++
			if *got.EndedAt != c.now || got.UpdatedAt != c.now {
				t.Errorf("%+v: times %+v", c, got)
			}
		}
		if c.delivery2 != "pending" {
			wantVersion++
		}
		if got.Version != wantVersion {
			t.Errorf("%+v: version %d want %d", c, got.Version, wantVersion)
		}
		if ck := model.Check(m.Tasks(), m.Events()); !ck.Healthy() {
			t.Errorf("%+v: unhealthy %+v", c, ck)
		}
	}
	for _, g := range []float64{-1, math.NaN(), math.Inf(1)} {
		m := &model.Model{}
		if _, err := m.Reconcile(1, g, 0, false); errClass(err) != "InvalidInput" {
			t.Errorf("active grace %v: %v", g, err)
		}
		if _, err := m.Reconcile(1, 0, g, true); errClass(err) != "InvalidInput" {
			t.Errorf("delivery grace %v: %v", g, err)
		}
	}
}
