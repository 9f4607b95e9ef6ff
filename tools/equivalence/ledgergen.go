package main

import (
	"errors"
	"math/rand"
	"slices"
	"strconv"

	model "github.com/stateguard/stateguard/model/ledger"
)

// generateLedger returns one sequence of task-state-guard calls made only
// of the commands the reference has, drawn from the executable model
// (model/ledger): the model follows the sequence call by call, and each
// call is chosen from what the model's ledger allows at that moment: an
// edge of its task machine or delivery machine out of a task's current
// state with a code the model registers for it (and now and then a
// refused edge or code), a heartbeat of a running task, and a reconcile
// whose clock lands on, just before or just after a boundary the model
// decides on (a deadline, the last update plus the active grace, the end
// plus the delivery grace). The sequence starts at the recordings' base
// and its clock never goes back; every task gets its id from the
// sequence. Besides, as the contract defines them: misuse, calls on a
// ledger that does not exist yet (L1, L2, L7), and the inputs of the
// declared divergences (L3's spellings, L8's deadline overflow).
func generateLedger(r *rand.Rand, steps int) []step {
	seq, _ := drawLedger(r, steps)
	return seq
}

// drawLedger is generateLedger, with a count of the model's decisions the
// sequence met (for the tests: each must be met).
func drawLedger(r *rand.Rand, steps int) ([]step, map[string]int) {
	g := ledgerGen{r: r, clock: ledgerBase, m: &model.Model{}, met: map[string]int{}}
	if r.Intn(8) == 0 {
		g.missingLedger()
	}
	// Then the ledger is made, so that the calls after it meet tasks.
	if r.Intn(3) == 0 {
		g.add("init")
	} else {
		g.create()
	}
	for len(g.seq) < steps {
		g.clock += float64(r.Intn(120))
		if r.Intn(4) == 0 {
			g.clock += 0.25
		}
		switch k := r.Intn(100); {
		case k < 16:
			g.create()
		case k < 44:
			g.taskEdge()
		case k < 58:
			g.deliveryEdge()
		case k < 64:
			g.heartbeat()
		case k < 82:
			g.reconcile()
		case k < 88:
			g.add("doctor")
		case k < 95:
			g.misuse()
		case k < 99:
			g.oddSpelling()
		default:
			// A deadline beyond the largest float (L8); it ends the
			// sequence, since the clock cannot come back.
			g.clock = 1.7e308
			g.add("create", "--task-id", overflowID, "--timeout-seconds", "1e308")
			g.add("start", overflowID)
			return g.seq, g.met
		}
	}
	return g.seq, g.met
}

// ledgerGen is a sequence being drawn and the model's ledger after it.
type ledgerGen struct {
	r     *rand.Rand
	clock float64
	m     *model.Model
	seq   []step
	met   map[string]int
}

// note counts the model's answer to a call: refused by class, or the
// decision a reconcile made.
func (g *ledgerGen) note(err error) {
	switch {
	case errors.Is(err, model.ErrStateConflict):
		g.met["StateConflict"]++
	case errors.Is(err, model.ErrInvalidInput):
		g.met["InvalidInput"]++
	case errors.Is(err, model.ErrTaskNotFound):
		g.met["TaskNotFound"]++
	case err == nil:
		g.met["ok"]++
	}
}

func (g *ledgerGen) pick(words []string) string { return words[g.r.Intn(len(words))] }

// add appends a call at the current clock.
func (g *ledgerGen) add(args ...string) {
	g.seq = append(g.seq, step{ledgerCall(args...), strconv.FormatFloat(g.clock, 'f', -1, 64)})
}

// tasks are the model's tasks, by id.
func (g *ledgerGen) tasks() []model.Task { return g.m.Tasks() }

// someID is mostly a task the model holds, now and then one it does not.
func (g *ledgerGen) someID() string {
	if ts := g.tasks(); len(ts) > 0 && g.r.Intn(10) > 0 {
		return ts[g.r.Intn(len(ts))].ID
	}
	return g.pick(ledgerIDs)
}

// missingLedger makes the calls of a ledger that does not exist yet.
func (g *ledgerGen) missingLedger() {
	for n := 1 + g.r.Intn(2); n > 0; n-- {
		switch g.r.Intn(6) {
		case 0:
			g.add("doctor")
		case 1:
			g.add("reconcile")
		case 2:
			g.add("reconcile", "--dry-run")
		case 3:
			g.add("start", g.pick(ledgerIDs))
		case 4:
			g.add("close", g.pick(ledgerIDs), "--status", "failed")
		default:
			g.add("start", "not-a-uuid")
		}
	}
}

// create makes a task the model does not hold yet (or, when all are
// taken, repeats one: idempotent, or a conflict on other fields).
func (g *ledgerGen) create() {
	id := g.someID()
	for _, candidate := range ledgerIDs {
		if _, err := g.m.Get(candidate); err != nil {
			id = candidate
			break
		}
	}
	p := model.CreateParams{TaskID: id, DeliveryRequired: true}
	args := []string{"create", "--task-id", id}
	if ts := g.tasks(); len(ts) > 0 && g.r.Intn(3) == 0 {
		p.ParentID = ts[g.r.Intn(len(ts))].ID
		args = append(args, "--parent-id", p.ParentID)
	}
	if g.r.Intn(2) == 0 {
		text := g.pick(timeouts)
		seconds, _ := strconv.ParseFloat(text, 64)
		p.TimeoutSeconds = &seconds
		args = append(args, "--timeout-seconds", text)
	}
	if g.r.Intn(3) == 0 {
		p.DeliveryRequired = false
		args = append(args, "--internal")
	}
	if g.r.Intn(5) == 0 {
		p.PayloadHash = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
		args = append(args, "--payload-sha256", p.PayloadHash)
	}
	g.add(args...)
	_, err := g.m.Create(p, g.clock)
	g.note(err)
}

// taskEdge takes an edge of the task machine out of a task's state: start,
// or close with a code registered for the target (no code, or another
// state's, now and then). From a terminal state, where the machine has no
// edge, the call is one the ledger refuses.
func (g *ledgerGen) taskEdge() {
	ts := g.tasks()
	if len(ts) == 0 {
		g.add("start", g.pick(ledgerIDs))
		return
	}
	t := ts[g.r.Intn(len(ts))]
	var edges []model.Transition
	for _, e := range model.TaskMachine.Edges {
		if e.From == t.Status {
			edges = append(edges, e)
		}
	}
	if len(edges) == 0 {
		// Terminal: a start, or a close into another terminal state.
		if g.r.Intn(2) == 0 {
			g.add("start", t.ID)
			_, err := g.m.Start(t.ID, g.clock)
			g.note(err)
			return
		}
		to := g.pick(model.TaskMachine.Terminal)
		g.add("close", t.ID, "--status", to)
		_, err := g.m.Close(t.ID, to, "", g.clock)
		g.note(err)
		return
	}
	e := edges[g.r.Intn(len(edges))]
	if e.To == model.StatusRunning {
		g.add("start", t.ID)
		_, err := g.m.Start(t.ID, g.clock)
		g.note(err)
		return
	}
	code := g.code(e.Codes, model.TaskMachine)
	args := []string{"close", t.ID, "--status", e.To}
	if code != "" {
		args = append(args, "--code", code)
	}
	g.add(args...)
	_, err := g.m.Close(t.ID, e.To, code, g.clock)
	g.note(err)
}

// code is mostly one of the registered codes, now and then none or one
// registered for another state of the machine.
func (g *ledgerGen) code(registered []string, m model.Machine) string {
	switch g.r.Intn(6) {
	case 0:
		return ""
	case 1:
		return g.pick(m.CodesFor(g.pick(m.Terminal)))
	}
	if len(registered) == 0 {
		return ""
	}
	return g.pick(registered)
}

// deliveryEdge takes an edge of the delivery machine: on a finished task
// whose delivery is pending, mostly the edge its guard allows (not
// applicable for an internal task, delivered or failed for the others);
// now and then the other kind, or a delivery on a task still at work.
func (g *ledgerGen) deliveryEdge() {
	ts := g.tasks()
	var open []model.Task
	for _, t := range ts {
		if t.DeliveryStatus == model.DeliveryPending && model.TaskMachine.IsTerminal(t.Status) {
			open = append(open, t)
		}
	}
	var t model.Task
	switch {
	case len(open) > 0 && g.r.Intn(5) > 0:
		t = open[g.r.Intn(len(open))]
	case len(ts) > 0:
		t = ts[g.r.Intn(len(ts))]
	default:
		g.add("delivery", g.pick(ledgerIDs), "--status", "delivered")
		return
	}
	allowed := []string{model.DeliveryDelivered, model.DeliveryFailed}
	if !t.DeliveryRequired {
		allowed = []string{model.DeliveryNotApplicable}
	}
	to := g.pick(allowed)
	if g.r.Intn(6) == 0 {
		to = g.pick(model.DeliveryMachine.Terminal)
	}
	code := g.code(model.DeliveryMachine.CodesFor(to), model.DeliveryMachine)
	args := []string{"delivery", t.ID, "--status", to}
	if code != "" {
		args = append(args, "--code", code)
	}
	g.add(args...)
	_, err := g.m.SetDelivery(t.ID, to, code, g.clock)
	g.note(err)
}

// heartbeat beats a running task mostly, any task now and then.
func (g *ledgerGen) heartbeat() {
	ts := g.tasks()
	var running []model.Task
	for _, t := range ts {
		if t.Status == model.StatusRunning {
			running = append(running, t)
		}
	}
	id := g.someID()
	if len(running) > 0 && g.r.Intn(4) > 0 {
		id = running[g.r.Intn(len(running))].ID
	}
	g.add("heartbeat", id)
	_, err := g.m.Heartbeat(id, g.clock)
	g.note(err)
}

// reconcile draws the graces, then moves the clock, mostly onto a
// boundary of the model's decision (exactly, or a quarter second either
// side) that has not passed yet: a running task's deadline, its last
// update plus the active grace, a finished task's end plus the delivery
// grace.
func (g *ledgerGen) reconcile() {
	args := []string{"reconcile"}
	dry := g.r.Intn(3) == 0
	if dry {
		args = append(args, "--dry-run")
	}
	active, delivery := model.DefaultGrace, model.DefaultGrace
	if g.r.Intn(2) == 0 {
		text := g.pick(graces)
		active, _ = strconv.ParseFloat(text, 64)
		args = append(args, "--active-grace-seconds", text)
	}
	if g.r.Intn(2) == 0 {
		text := g.pick(graces)
		delivery, _ = strconv.ParseFloat(text, 64)
		args = append(args, "--delivery-grace-seconds", text)
	}
	var boundaries []float64
	for _, t := range g.tasks() {
		switch {
		case t.Status == model.StatusRunning:
			if t.DeadlineAt != nil {
				boundaries = append(boundaries, *t.DeadlineAt)
			}
			boundaries = append(boundaries, t.UpdatedAt+active)
		case t.EndedAt != nil && t.DeliveryStatus == model.DeliveryPending:
			boundaries = append(boundaries, *t.EndedAt+delivery)
		}
	}
	boundaries = slices.DeleteFunc(boundaries, func(b float64) bool { return b+0.25 < g.clock || b > 1e15 })
	if len(boundaries) > 0 && g.r.Intn(4) > 0 {
		at := boundaries[g.r.Intn(len(boundaries))] + []float64{-0.25, 0, 0, 0.25}[g.r.Intn(4)]
		g.clock = max(g.clock, at)
	}
	g.add(args...)
	rep, err := g.m.Reconcile(g.clock, active, delivery, dry)
	g.note(err)
	for name, n := range map[string]int{"timed out": rep.TasksTimedOut, "active retained": rep.FreshActiveRetained,
		"delivery failed": rep.DeliveriesFailed, "delivery not applicable": rep.DeliveriesNotApplicable, "delivery retained": rep.PendingDeliveryRetained} {
		if n > 0 {
			g.met[name]++
		}
	}
}

// misuse is a call both tools refuse alike.
func (g *ledgerGen) misuse() {
	switch g.r.Intn(5) {
	case 0:
		g.add("start", "not-a-uuid")
	case 1:
		g.add("create", "--task-id", g.someID(), "--timeout-seconds", "-1")
	case 2:
		g.add("close", g.someID(), "--status", "running")
	case 3:
		g.add("frobnicate")
	default:
		g.add("create", "--bogus")
	}
}

// oddSpelling is an id or a number the reference reads and this ledger
// refuses (L3).
func (g *ledgerGen) oddSpelling() {
	switch g.r.Intn(3) {
	case 0:
		g.add("start", g.pick(oddIDs))
	case 1:
		g.add("create", "--task-id", g.someID(), "--timeout-seconds", g.pick(oddNums))
	default:
		g.add("reconcile", "--dry-run", "--active-grace-seconds", g.pick(oddNums))
	}
}
