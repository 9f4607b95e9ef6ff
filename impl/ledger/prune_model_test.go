package ledger_test

import (
	"flag"
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	model "github.com/stateguard/stateguard/model/ledger"
)

// CreateTree creates a fresh root and one to three fresh children under
// it or under each other (ids the ledger generates), each create compared
// with the model: trees of several tasks, which CreateChild's colliding
// ids rarely grow.
func (mc *machine) CreateTree(t *rapid.T) {
	mc.tick(t)
	var tree []string
	for i := 0; i <= rapid.IntRange(1, 3).Draw(t, "treeChildren"); i++ {
		p := ledger.CreateParams{Internal: rapid.Bool().Draw(t, "treeInternal")}
		if i > 0 {
			p.ParentID = tree[rapid.IntRange(0, len(tree)-1).Draw(t, "treeParent")]
		}
		mc.logf(t, "create id=\"\" parent=%q required=%v (tree)", p.ParentID, !p.Internal)
		got, gerr := mc.l.Create(p)
		want, werr := mc.m.Create(model.CreateParams{TaskID: poolID(1000 + mc.nextGen), ParentID: p.ParentID, DeliveryRequired: !p.Internal}, mc.clock.now)
		compareTask(t, "create in a tree", got, gerr, want, werr)
		if werr != nil {
			return
		}
		mc.remember(want.ID)
		tree = append(tree, want.ID)
	}
}

// Finish drives the tree of a known task towards the end prune looks
// for: each of its tasks (but, one time in four, one left as it is or
// closed with its delivery pending, so that candidates are also kept) is
// closed (any terminal state) and its
// delivery settled as its kind allows (delivered or failed when
// required, not_applicable when internal), each call compared with the
// model. Random closes and deliveries alone rarely settle a whole tree.
func (mc *machine) Finish(t *rapid.T) {
	if len(mc.created) == 0 {
		t.Skip("no task yet")
	}
	id := rapid.SampledFrom(mc.created).Draw(t, "finish")
	task, err := mc.m.Get(id)
	if err != nil {
		t.Skip("pruned")
	}
	for task.ParentID != nil {
		task, _ = mc.m.Get(*task.ParentID)
	}
	tree := []string{task.ID}
	for i := 0; i < len(tree); i++ {
		children, _ := mc.m.ChildrenOf(tree[i])
		for _, c := range children {
			tree = append(tree, c.ID)
		}
	}
	// The clock reads no earlier than anything the tree stored (a clock
	// moved back refuses the closes, which the other actions cover).
	for _, id := range tree {
		task, _ := mc.m.Get(id)
		mc.clock.now = max(mc.clock.now, task.UpdatedAt, task.DeliveryUpdatedAt)
	}
	skip := -1
	if rapid.IntRange(0, 3).Draw(t, "leaveOne") == 0 {
		// Below the root when there is a child: a root left as it is is no
		// candidate at all.
		skip = rapid.IntRange(min(1, len(tree)-1), len(tree)-1).Draw(t, "left")
	}
	closeOnly := rapid.Bool().Draw(t, "closeOnly") // the task left is closed, its delivery pending
	for i, id := range tree {
		if i == skip && !closeOnly {
			continue
		}
		current, _ := mc.m.Get(id)
		if !model.TaskMachine.IsTerminal(current.Status) {
			status := rapid.SampledFrom(model.TaskMachine.Terminal).Draw(t, "finishStatus")
			mc.logf(t, "close %q %q <none> (finish)", id, status)
			got, gerr := mc.l.CloseTask(id, ledger.Status(status), ledger.NoCode)
			want, werr := mc.m.Close(id, status, "", mc.clock.now)
			compareTask(t, "finish close", got, gerr, want, werr)
		}
		if i == skip {
			continue
		}
		delivery := model.DeliveryNotApplicable
		if current.DeliveryRequired {
			delivery = rapid.SampledFrom([]string{model.DeliveryDelivered, model.DeliveryFailed}).Draw(t, "finishDelivery")
		}
		mc.logf(t, "delivery %q %q <none> (finish)", id, delivery)
		got, gerr := mc.l.SetDelivery(id, ledger.DeliveryStatus(delivery), ledger.NoCode)
		want, werr := mc.m.SetDelivery(id, delivery, "", mc.clock.now)
		compareTask(t, "finish delivery", got, gerr, want, werr)
	}
}

// Prune: a cutoff on and around the clock (sometimes one that is not
// finite, or none), applied or as a dry run, with small random batch
// bounds so that trees meet batch boundaries: the report equals the
// model's, and the check after the step compares every remaining task
// and event row with the model's.
func (mc *machine) Prune(t *rapid.T) {
	var cutoff *float64
	switch rapid.IntRange(0, 19).Draw(t, "cutoffKind") {
	case 0:
		// no cutoff: InvalidInput
	case 1:
		v := rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1)}).Draw(t, "badCutoff")
		cutoff = &v
	case 2:
		// Past every end (the clock may have jumped to the top of the
		// float range, where an offset is lost).
		v := math.MaxFloat64
		cutoff = &v
	default:
		v := mc.clock.now + rapid.SampledFrom([]float64{-1e5, -700, -600, -0.5, 0, 0.001, 600, 1e10}).Draw(t, "cutoffOffset")
		cutoff = &v
	}
	if tasks := mc.m.Tasks(); len(tasks) > 0 && cutoff != nil && rapid.IntRange(0, 2).Draw(t, "onAnEnd") == 0 {
		// Exactly a task's end, or just after it, where < and <= differ.
		if task := tasks[rapid.IntRange(0, len(tasks)-1).Draw(t, "endOf")]; task.EndedAt != nil {
			*cutoff = *task.EndedAt
			if rapid.Bool().Draw(t, "justAfter") {
				*cutoff = math.Nextafter(*cutoff, math.Inf(1))
			}
		}
	}
	dry := rapid.Bool().Draw(t, "dryRun")
	roots, tasks := rapid.IntRange(0, 3).Draw(t, "batchRoots"), rapid.IntRange(0, 3).Draw(t, "batchTasks")
	ledger.SetPruneBatch(mc.l, roots, tasks)
	// The plan's window: the default, or a few tasks, batches or bytes of
	// sequences, so that a prune plans several times and gives up batches.
	window := [3]int{}
	if rapid.Bool().Draw(t, "smallWindow") {
		window = [3]int{rapid.IntRange(0, 4).Draw(t, "windowTasks"), rapid.IntRange(0, 2).Draw(t, "windowBatches"), rapid.IntRange(0, 6).Draw(t, "windowBytes")}
	}
	ledger.SetPruneWindow(mc.l, window[0], window[1], window[2])
	text := "none"
	if cutoff != nil {
		text = fmt.Sprint(*cutoff)
	}
	mc.logf(t, "prune ended-before=%s dry=%v batch=%d/%d window=%v", text, dry, roots, tasks, window)
	opts := ledger.PruneOptions{DryRun: dry}
	if cutoff != nil {
		opts = ledgerrows.PruneSeconds(*cutoff, dry)
	}
	got, gerr := mc.l.Prune(opts)
	if cutoff == nil {
		if classOf(gerr) != "InvalidInput" {
			t.Fatalf("prune without a cutoff: %v", gerr)
		}
		return
	}
	want, werr := mc.m.Prune(*cutoff, dry)
	if classOf(gerr) != classOf(werr) {
		t.Fatalf("prune: ledger %s (%v), model %s (%v)", classOf(gerr), gerr, classOf(werr), werr)
	}
	t.Logf("  -> %s %+v", classOf(werr), want)
	if gerr == nil && fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("prune report\nledger %+v\nmodel  %+v", got, want)
	}
	if gerr == nil {
		pruneSeen.calls++
		if want.TreesRemoved > 0 {
			pruneSeen.removing++
		}
		if want.TasksRemoved > want.TreesRemoved {
			pruneSeen.withChildren++
		}
		if want.TreesRetained > 0 {
			pruneSeen.retaining++
		}
	}
}

// TestPruneMatchesModel is TestLedgerMatchesModel's state machine with
// the actions that build, finish and prune trees weighted up (a key per
// weight), so that prunes meet whole trees, trees kept for one task and
// batch boundaries often: the ledger's and the model's reports, and every
// row and event after each step, must agree (the check of
// TestLedgerMatchesModel, doctor included). -rapid.checks sets the number
// of runs (default 25 here), -rapid.steps their length (70).
func TestPruneMatchesModel(t *testing.T) {
	for name, value := range map[string]string{"rapid.checks": "25", "rapid.steps": "70"} {
		explicit := false
		flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == name })
		if !explicit {
			old := flag.Lookup(name).Value.String()
			if err := flag.Set(name, value); err != nil {
				t.Fatal(err)
			}
			defer flag.Set(name, old)
		}
	}

	pruneSeen.calls, pruneSeen.removing, pruneSeen.withChildren, pruneSeen.retaining = 0, 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		mc := newMachine(rt, t.TempDir())
		defer mc.close(rt)
		rt.Repeat(map[string]func(*rapid.T){
			"create":    mc.Create,
			"child":     mc.CreateChild,
			"tree":      mc.CreateTree,
			"start":     mc.Start,
			"close":     mc.Close,
			"delivery":  mc.SetDelivery,
			"reconcile": mc.Reconcile,
			"finish":    mc.Finish,
			"finish2":   mc.Finish,
			"finish3":   mc.Finish,
			"prune":     mc.Prune,
			"prune2":    mc.Prune,
			"list":      mc.List,
			"":          mc.check,
		})
	})
	t.Logf("prunes answered %d, removing a tree %d, a tree with children %d, keeping a candidate %d",
		pruneSeen.calls, pruneSeen.removing, pruneSeen.withChildren, pruneSeen.retaining)
	if pruneSeen.removing == 0 || pruneSeen.withChildren == 0 || pruneSeen.retaining == 0 {
		t.Errorf("the runs never met a case prune must handle: %+v", pruneSeen)
	}
}

// pruneSeen counts, over a run, the prunes that answered, removed a tree,
// removed a tree with children, and kept a candidate tree (logged by
// TestLedgerMatchesModel, to show the action reaches those cases).
var pruneSeen struct{ calls, removing, withChildren, retaining int }
