package ledger

import (
	"math"
	"testing"
)

// TestPruneTrees: a finished tree goes whole with its events; a tree with
// one unfinished task, or one that ended at the cutoff, stays whole.
func TestPruneTrees(t *testing.T) {
	id := func(n int) string { return "00000000-0000-4000-8000-00000000000" + string(rune('0'+n)) }
	var m Model
	mustTask := func(_ Task, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	now := 100.0
	mustTask(m.Create(CreateParams{TaskID: id(1), DeliveryRequired: true}, now))
	mustTask(m.Create(CreateParams{TaskID: id(2), ParentID: id(1)}, now))
	mustTask(m.Create(CreateParams{TaskID: id(3)}, now))
	mustTask(m.Create(CreateParams{TaskID: id(4), ParentID: id(3)}, now))
	mustTask(m.Create(CreateParams{TaskID: id(5)}, now))
	for _, n := range []int{1, 2, 3, 5} {
		mustTask(m.Close(id(n), StatusSucceeded, "", now+float64(n)))
	}
	mustTask(m.SetDelivery(id(1), DeliveryDelivered, "", 110))
	mustTask(m.SetDelivery(id(2), DeliveryNotApplicable, "", 110))
	mustTask(m.SetDelivery(id(3), DeliveryNotApplicable, "", 110))
	mustTask(m.SetDelivery(id(5), DeliveryNotApplicable, "", 110))
	// Tree 1 (ended 101, 102) goes; tree 3 keeps its queued child; task 5
	// ended at 105, not before the cutoff, so it is no candidate.
	dry, err := m.Prune(105, true)
	if err != nil {
		t.Fatal(err)
	}
	want := PruneReport{TreesExamined: 2, TreesRemoved: 1, TreesRetained: 1, TasksRemoved: 2, EventsRemoved: 6, DryRun: true}
	if dry != want {
		t.Fatalf("dry run %+v, want %+v", dry, want)
	}
	rep, err := m.Prune(105, false)
	want.DryRun, want.Applied = false, true
	if err != nil || rep != want {
		t.Fatalf("apply %+v %v, want %+v", rep, err, want)
	}
	if len(m.Tasks()) != 3 || len(m.Events()) != 3+3+1 {
		t.Fatalf("left %d tasks, %d events", len(m.Tasks()), len(m.Events()))
	}
	if _, err := m.Get(id(2)); err == nil {
		t.Fatal("child of a pruned root remains")
	}
	if _, err := m.Prune(math.NaN(), false); err == nil {
		t.Fatal("a cutoff that is not finite was accepted")
	}
}
