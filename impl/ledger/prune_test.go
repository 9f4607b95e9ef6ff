package ledger

import (
	"errors"
	"testing"
)

// pruneTree builds a root with two children under it through the API:
// each task closed and delivered as settle says ("" leaves the task
// queued, "closed" closes it with its delivery pending, "settled" also
// settles its delivery). It returns the ids, root first.
func pruneTree(t *testing.T, l *Ledger, clk *scriptedClock, settle ...string) []string {
	t.Helper()
	var ids []string
	for i, how := range settle {
		p := CreateParams{Internal: i%2 == 1}
		if i > 0 {
			p.ParentID = ids[0]
		}
		task, err := l.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
		clk.now++
		if how == "" {
			continue
		}
		if _, err := l.CloseTask(task.ID, StatusSucceeded, NoCode); err != nil {
			t.Fatal(err)
		}
		if how == "closed" {
			continue
		}
		d := DeliveryDelivered
		if p.Internal {
			d = DeliveryNotApplicable
		}
		if _, err := l.SetDelivery(task.ID, d, NoCode); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// TestPruneKeepsUnsettledTrees: a tree goes only when every task in it
// is terminal with its delivery settled and ended before the cutoff; a
// child still queued, a child closed with its delivery pending, or a
// child that ended at the cutoff keeps the whole tree.
func TestPruneKeepsUnsettledTrees(t *testing.T) {
	l, clk, _ := openTest(t)
	gone := pruneTree(t, l, clk, "settled", "settled", "settled")
	queued := pruneTree(t, l, clk, "settled", "settled", "")
	pending := pruneTree(t, l, clk, "settled", "closed", "settled")
	late := pruneTree(t, l, clk, "settled", "settled")
	lateChild, _ := l.Get(late[1])
	cutoff := *lateChild.EndedAt // that child ended at the cutoff, not before
	clk.now += 1000
	rep, err := l.Prune(PruneOptions{EndedBefore: &cutoff})
	if err != nil {
		t.Fatal(err)
	}
	want := PruneReport{TreesExamined: 4, TreesRemoved: 1, TreesRetained: 3, TasksRemoved: 3, EventsRemoved: 9, Applied: true}
	if rep != want {
		t.Fatalf("prune %+v, want %+v", rep, want)
	}
	for _, id := range gone {
		if _, err := l.Get(id); !errors.Is(err, ErrTaskNotFound) {
			t.Fatalf("a task of the finished tree remains: %v", err)
		}
	}
	for _, tree := range [][]string{queued, pending, late} {
		for _, id := range tree {
			if _, err := l.Get(id); err != nil {
				t.Fatalf("a task of a kept tree is gone: %v", err)
			}
		}
	}
	healthy(t, l)
}
