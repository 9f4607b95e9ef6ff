package ledger_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	model "github.com/stateguard/stateguard/model/ledger"
)

var (
	walkSeed  = flag.Uint64("model.seed", 1, "first seed of TestReachableStatesAreHealthy")
	walkCount = flag.Int("model.walks", 200, "number of random walks in TestReachableStatesAreHealthy")
)

// findingCounts keeps only the finding keys, for compact comparison.
func findingCounts(c model.Counts) string {
	return fmt.Sprintf("orphan=%d cycle=%d fk=%d state=%d timestamp=%d event=%d tasks=%d events=%d",
		c.OrphanCount, c.ParentCycleCount, c.ForeignKeyErrorCount, c.StateInconsistencyCount,
		c.TimestampInconsistencyCount, c.EventInconsistencyCount, c.TaskCount, c.EventCount)
}

func taskIndex(tasks []model.Task, n int) int {
	return slices.IndexFunc(tasks, func(t model.Task) bool { return t.ID == fixtureID(n) })
}

// TestCheckerCatchesFixtureCorruptions applies the single damages of the
// broken-*.sqlite fixtures to the small-v2 rows and expects the reference
// doctor's counts.
func TestCheckerCatchesFixtureCorruptions(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(tasks []model.Task, events []model.Event) ([]model.Task, []model.Event)
		want    string
	}{
		{"status-edited", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			ts[taskIndex(ts, 7)].Status = "failed"
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=0 timestamp=0 event=1 tasks=12 events=35"},
		{"event-deleted", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			i := slices.IndexFunc(es, func(e model.Event) bool {
				return e.TaskID == fixtureID(8) && e.To == "failed" && e.Kind == "task_transition"
			})
			return ts, slices.Delete(es, i, i+1)
		}, "orphan=0 cycle=0 fk=0 state=0 timestamp=0 event=1 tasks=12 events=34"},
		{"timestamp-order", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			t9 := &ts[taskIndex(ts, 9)]
			t9.UpdatedAt = *t9.StartedAt - 5
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=0 timestamp=1 event=0 tasks=12 events=35"},
		{"orphan-parent", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			p := "00000000-0000-4000-8000-0000000000ff"
			ts[taskIndex(ts, 11)].ParentID = &p
			return ts, es
		}, "orphan=1 cycle=0 fk=1 state=0 timestamp=0 event=0 tasks=12 events=35"},
		{"parent-cycle", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			p := fixtureID(4)
			ts[taskIndex(ts, 1)].ParentID = &p
			return ts, es
		}, "orphan=0 cycle=1 fk=0 state=0 timestamp=1 event=0 tasks=12 events=35"},
		// Further single damages, one per rule family.
		{"unregistered code", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			c := "worker_completed"
			ts[taskIndex(ts, 8)].TerminalCode = &c
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=1 timestamp=0 event=1 tasks=12 events=35"},
		{"version too low", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			ts[taskIndex(ts, 1)].Version = 2
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=1 timestamp=0 event=0 tasks=12 events=35"},
		{"internal task delivered", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			ts[taskIndex(ts, 2)].DeliveryStatus = "delivered"
			ts[taskIndex(ts, 2)].DeliveryCode = nil
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=1 timestamp=0 event=1 tasks=12 events=35"},
		{"deadline not start+timeout", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			d := at(1602)
			ts[taskIndex(ts, 12)].DeadlineAt = &d
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=0 timestamp=1 event=0 tasks=12 events=35"},
		{"event for missing task", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			c := "created"
			return ts, append(es, model.Event{Sequence: 99, TaskID: idX, Kind: "created", To: "queued", OccurredAt: 1, Code: &c})
		}, "orphan=0 cycle=0 fk=1 state=0 timestamp=0 event=1 tasks=12 events=36"},
		// 8.3: a parent created at +Inf is counted; its two children are not.
		{"parent created at infinity", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			ts[taskIndex(ts, 1)].CreatedAt = math.Inf(1)
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=0 timestamp=1 event=1 tasks=12 events=35"},
		// 8.1: once per distinct missing id, however many events name it.
		{"events for two missing tasks", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			c, other := "created", fixtureID(0xfe)
			return ts, append(es, model.Event{Sequence: 99, TaskID: idX, Kind: "created", To: "queued", OccurredAt: 1, Code: &c},
				model.Event{Sequence: 100, TaskID: idX, Kind: "created", To: "queued", OccurredAt: 1, Code: &c},
				model.Event{Sequence: 101, TaskID: other, Kind: "created", To: "queued", OccurredAt: 1, Code: &c})
		}, "orphan=0 cycle=0 fk=3 state=0 timestamp=0 event=2 tasks=12 events=38"},
		{"events out of order", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			i := slices.IndexFunc(es, func(e model.Event) bool {
				return e.TaskID == fixtureID(1) && e.Kind == "task_transition" && e.To == "running"
			})
			es[i].Sequence = 1000
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=0 timestamp=0 event=1 tasks=12 events=35"},
		{"two cycles and a self loop count three", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			link := func(child, parent int) { p := fixtureID(parent); ts[taskIndex(ts, child)].ParentID = &p }
			link(5, 6)
			link(6, 5)
			link(7, 8)
			link(8, 7)
			link(9, 9)
			return ts, es
		}, "orphan=0 cycle=3 fk=0 state=0 timestamp=2 event=0 tasks=12 events=35"},
		{"delivery updated before end", func(ts []model.Task, es []model.Event) ([]model.Task, []model.Event) {
			ts[taskIndex(ts, 8)].DeliveryUpdatedAt = at(401)
			return ts, es
		}, "orphan=0 cycle=0 fk=0 state=0 timestamp=1 event=1 tasks=12 events=35"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := buildSmallV2(t)
			tasks, events := c.corrupt(m.Tasks(), m.Events())
			got := model.Check(tasks, events)
			if findingCounts(got) != c.want {
				t.Fatalf("got  %s\nwant %s", findingCounts(got), c.want)
			}
			if got.Healthy() {
				t.Fatal("Healthy() true on a damaged ledger")
			}
		})
	}
}

// walker drives a model with random operations, like a careless client:
// unknown ids, invalid codes, a clock that sometimes steps back.
type walker struct {
	rng *rand.Rand
	m   *model.Model
	ids []string
	now float64
	log []string
}

var someCodes = []string{"", "", "completed", "worker_completed", "worker_failed", "deadline_exceeded", "restart_stale",
	"caller_cancelled", "transport_acknowledged", "delivery_grace_expired", "transport_failed", "internal_task", "bogus", "Bad!"}

func (w *walker) pickID() string {
	if len(w.ids) == 0 || w.rng.IntN(10) == 0 {
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", w.rng.IntN(1<<16), len(w.ids))
	}
	return w.ids[w.rng.IntN(len(w.ids))]
}

func (w *walker) step(t *testing.T) {
	switch w.rng.IntN(10) {
	case 0:
		w.now -= float64(w.rng.IntN(50))
	default:
		w.now += []float64{0, 0.25, 1, 7, 100, 1000}[w.rng.IntN(6)]
	}
	before := w.m.Clone()
	var desc string
	var got model.Task
	var err error
	mutating := true
	switch op := w.rng.IntN(8); op {
	case 0, 1:
		p := model.CreateParams{TaskID: fmt.Sprintf("%08x-0000-4000-8000-%012x", w.rng.IntN(1<<16), len(w.ids)), DeliveryRequired: w.rng.IntN(3) > 0}
		if len(w.ids) > 0 && w.rng.IntN(3) == 0 {
			p = model.CreateParams{TaskID: w.ids[w.rng.IntN(len(w.ids))]} // probably a conflicting repeat
		} else {
			w.ids = append(w.ids, p.TaskID)
		}
		if len(w.ids) > 1 && w.rng.IntN(2) == 0 {
			p.ParentID = w.ids[w.rng.IntN(len(w.ids)-1)]
		}
		if w.rng.IntN(2) == 0 {
			p.TimeoutSeconds = f64([]float64{0, 0.5, 30, 1e10}[w.rng.IntN(4)])
		}
		desc = fmt.Sprintf("create %+v", p)
		got, err = w.m.Create(p, w.now)
	case 2:
		id := w.pickID()
		desc = "start " + id
		got, err = w.m.Start(id, w.now)
	case 3:
		id := w.pickID()
		desc = "heartbeat " + id
		got, err = w.m.Heartbeat(id, w.now)
	case 4:
		id, st, code := w.pickID(), model.TaskMachine.States[w.rng.IntN(6)], someCodes[w.rng.IntN(len(someCodes))]
		desc = fmt.Sprintf("close %s %s %q", id, st, code)
		got, err = w.m.Close(id, st, code, w.now)
	case 5:
		id, st, code := w.pickID(), model.DeliveryMachine.States[w.rng.IntN(4)], someCodes[w.rng.IntN(len(someCodes))]
		desc = fmt.Sprintf("delivery %s %s %q", id, st, code)
		got, err = w.m.SetDelivery(id, st, code, w.now)
	default:
		ag, dg := []float64{0, 5, 600, 1e10}[w.rng.IntN(4)], []float64{0, 5, 600, 1e10}[w.rng.IntN(4)]
		preview, perr := w.m.Reconcile(w.now, ag, dg, true)
		if !sameRows(before, w.m) {
			t.Fatalf("dry run changed the model\n%s", strings.Join(w.log, "\n"))
		}
		rep, aerr := w.m.Reconcile(w.now, ag, dg, false)
		desc = fmt.Sprintf("reconcile %v %v -> %+v %v", ag, dg, rep, aerr)
		preview.DryRun, preview.Applied = false, true
		if errClass(perr) != errClass(aerr) || (aerr == nil && preview != rep) {
			t.Fatalf("preview %+v %v differs from apply %+v %v\n%s", preview, perr, rep, aerr, strings.Join(w.log, "\n"))
		}
		err = aerr
		mutating = false
	}
	w.log = append(w.log, fmt.Sprintf("@%v %s -> %s", w.now, desc, errClass(err)))
	if err != nil && !sameRows(before, w.m) {
		t.Fatalf("refused operation changed the model\n%s", strings.Join(w.log, "\n"))
	}
	if err == nil && mutating {
		old, _ := before.Get(got.ID)
		if d := got.Version - old.Version; d != 0 && d != 1 {
			t.Fatalf("version jumped by %d\n%s", d, strings.Join(w.log, "\n"))
		}
	}
}

// TestReachableStatesAreHealthy walks random operation sequences and
// requires the Checker to find nothing after every step. A failure prints
// the seed (replay with -model.seed=N -model.walks=1) and the op log.
func TestReachableStatesAreHealthy(t *testing.T) {
	for i := 0; i < *walkCount; i++ {
		seed := *walkSeed + uint64(i)
		w := &walker{rng: rand.New(rand.NewPCG(seed, 0)), m: &model.Model{}, now: 1000}
		for range 60 {
			w.step(t)
			if c := model.Check(w.m.Tasks(), w.m.Events()); !c.Healthy() {
				t.Fatalf("seed %d: unhealthy %s after\n%s", seed, findingCounts(c), strings.Join(w.log, "\n"))
			}
		}
	}
}
