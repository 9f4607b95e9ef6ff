package ledger

import (
	"errors"
	"fmt"
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
	rep, err := l.Prune(PruneOptions{EndedBefore: cutoff})
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

// settledTrees makes n trees of a root and two children, every task
// closed and its delivery settled, each tree a second after the one
// before (so the candidates come in the trees' order). It returns the
// ids per tree, root first.
func settledTrees(t *testing.T, l *Ledger, clk *scriptedClock, n int) [][]string {
	t.Helper()
	var trees [][]string
	for range n {
		trees = append(trees, pruneTree(t, l, clk, "settled", "settled", "settled"))
	}
	return trees
}

// treeState reports how many tasks of tree remain.
func treeState(t *testing.T, l *Ledger, tree []string) int {
	t.Helper()
	n := 0
	for _, id := range tree {
		_, err := l.Get(id)
		switch {
		case err == nil:
			n++
		case !errors.Is(err, ErrTaskNotFound):
			t.Fatal(err)
		}
	}
	return n
}

// TestPruneFailedBatchKeepsEarlierOnes: batches of one tree; a failure
// inside the third batch's transaction, after its removals, rolls that
// batch back and ends the prune: the two batches before stay committed,
// the report counts them, every tree is either gone whole or whole, the
// doctor is healthy, and a second prune removes the rest.
func TestPruneFailedBatchKeepsEarlierOnes(t *testing.T) {
	l, clk, _ := openTest(t)
	trees := settledTrees(t, l, clk, 5)
	SetPruneBatch(l, 1, 1)
	planted := errors.New("planted failure")
	hooks.pruneBatch = func(batch int, phase string) error {
		if batch == 2 && phase == "write" {
			return planted
		}
		return nil
	}
	defer func() { hooks.pruneBatch = nil }()
	cutoff := timeAt(clk.now + 1)
	rep, err := l.Prune(PruneOptions{EndedBefore: cutoff})
	if !errors.Is(err, planted) {
		t.Fatalf("prune answered %v", err)
	}
	if want := (PruneReport{TreesExamined: 2, TreesRemoved: 2, TasksRemoved: 6, EventsRemoved: 18, Applied: true}); rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	for i, tree := range trees {
		want := 3
		if i < 2 {
			want = 0
		}
		if got := treeState(t, l, tree); got != want {
			t.Fatalf("tree %d holds %d of its 3 tasks, want %d", i, got, want)
		}
	}
	healthy(t, l)
	hooks.pruneBatch = nil
	rep, err = l.Prune(PruneOptions{EndedBefore: cutoff})
	if err != nil || rep.TreesRemoved != 3 || rep.TasksRemoved != 9 {
		t.Fatalf("second prune %+v %v", rep, err)
	}
	healthy(t, l)
}

// TestPruneChildAddedBetweenBatches: another ledger on the file adds a
// child to the next batch's tree while the prune runs (after the first
// batch committed): that tree is kept whole, with its new child, and the
// others go.
func TestPruneChildAddedBetweenBatches(t *testing.T) {
	l, clk, p := openTest(t)
	trees := settledTrees(t, l, clk, 3)
	other := secondLedger(t, p, clk)
	SetPruneBatch(l, 1, 1)
	var child Task
	hooks.pruneBatch = func(batch int, phase string) error {
		if batch == 0 && phase == "committed" {
			var err error
			child, err = other.Create(CreateParams{ParentID: trees[1][0]})
			return err
		}
		return nil
	}
	defer func() { hooks.pruneBatch = nil }()
	cutoff := timeAt(clk.now + 1)
	rep, err := l.Prune(PruneOptions{EndedBefore: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if want := (PruneReport{TreesExamined: 3, TreesRemoved: 2, TreesRetained: 1, TasksRemoved: 6, EventsRemoved: 18, Applied: true}); rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	if treeState(t, l, trees[0]) != 0 || treeState(t, l, trees[1]) != 3 || treeState(t, l, trees[2]) != 0 {
		t.Fatal("a tree was not removed or kept whole")
	}
	if _, err := l.Get(child.ID); err != nil {
		t.Fatalf("the new child: %v", err)
	}
	healthy(t, l)
}

// TestPruneBesideAWriter: while a prune runs in batches of one tree,
// another ledger on the file adds children: to each odd tree before the
// batch that judges it, and to each batch's own tree while the batch's
// removals are not yet committed (that create waits for the write lock
// and then finds an even tree's root gone: TaskNotFound, never a child
// of a removed task). A child created is never removed and keeps its
// parent, every tree is removed or kept whole, every even tree goes, and
// the doctor finds no orphan.
func TestPruneBesideAWriter(t *testing.T) {
	l, clk, p := openTest(t)
	trees := settledTrees(t, l, clk, 30)
	other := secondLedger(t, p, clk)
	SetPruneBatch(l, 1, 1)
	var children []Task
	answers := make(chan error, len(trees)*2)
	create := func(tree int) {
		task, err := other.Create(CreateParams{ParentID: trees[tree%len(trees)][0]})
		if err == nil {
			children = append(children, task)
		}
		if tree%2 == 0 && !errors.Is(err, ErrTaskNotFound) {
			err = fmt.Errorf("a create under the root of removed tree %d answered %v", tree, err)
		} else if tree%2 == 1 && err != nil {
			err = fmt.Errorf("a create under the root of kept tree %d answered %v", tree, err)
		} else {
			err = nil
		}
		answers <- err
	}
	var inFlight int
	hooks.pruneBatch = func(batch int, phase string) error {
		if phase == "read" {
			return nil
		}
		if phase == "write" {
			// This batch's own tree, while its removal is not committed.
			inFlight++
			go create(batch)
			return nil
		}
		for ; inFlight > 0; inFlight-- {
			if err := <-answers; err != nil {
				return err
			}
		}
		if batch%2 == 0 {
			// The next tree, before its batch judges it.
			create(batch + 1)
			return <-answers
		}
		return nil
	}
	defer func() { hooks.pruneBatch = nil }()
	cutoff := timeAt(clk.now + 1)
	rep, err := l.Prune(PruneOptions{EndedBefore: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		if _, err := l.Get(c.ID); err != nil {
			t.Fatalf("a child created beside the prune: %v", err)
		}
		if _, err := l.Get(*c.ParentID); err != nil {
			t.Fatalf("the parent of a child created beside the prune: %v", err)
		}
	}
	for i, tree := range trees {
		if n := treeState(t, l, tree); n != 0 && n != 3 || i%2 == 0 && n != 0 {
			t.Fatalf("tree %d holds %d of its 3 tasks", i, n)
		}
	}
	if rep.TreesRemoved < len(trees)/2 || len(children) == 0 {
		t.Fatalf("prune %+v beside %d children created", rep, len(children))
	}
	healthy(t, l)
	t.Logf("prune %+v beside %d children created", rep, len(children))
}

// TestPruneKeepsTheFileALedger: after a prune, a failed one included, the
// connection has foreign keys on again (read back), the file still has
// the exact schema and metadata (a writable open validates them and the
// fingerprint is the one the Python ledger checks), and the doctor is
// healthy.
func TestPruneKeepsTheFileALedger(t *testing.T) {
	l, clk, p := openTest(t)
	settledTrees(t, l, clk, 4)
	SetPruneBatch(l, 1, 1)
	cutoff := timeAt(clk.now + 1)
	hooks.pruneBatch = func(batch int, phase string) error {
		if batch == 1 && phase == "write" {
			return errors.New("planted failure")
		}
		return nil
	}
	_, err := l.Prune(PruneOptions{EndedBefore: cutoff})
	hooks.pruneBatch = nil
	if err == nil {
		t.Fatal("the planted failure did not end the prune")
	}
	for range 2 {
		if on, err := l.pragmaInt("PRAGMA foreign_keys"); err != nil || on != 1 {
			t.Fatalf("foreign_keys after prune: %d %v", on, err)
		}
		if _, err := l.Prune(PruneOptions{EndedBefore: cutoff}); err != nil {
			t.Fatal(err)
		}
	}
	healthy(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(p, Options{AllowExternalACL: onWindows, MustExist: true})
	if err != nil {
		t.Fatalf("writable open after prune: %v", err)
	}
	defer again.Close()
	var fingerprint string
	if err := again.conn.QueryRowContext(t.Context(), `SELECT value FROM schema_meta WHERE key = 'schema_fingerprint'`).Scan(&fingerprint); err != nil {
		t.Fatal(err)
	}
	if fingerprint != "50ae209ec97afb360e142cfae85767f575acc2a065103f5b642bfd0c141e08f6" {
		t.Fatalf("fingerprint %s", fingerprint)
	}
	healthy(t, again)
}

// TestPruneTreeChangedAfterItsReadPass: a child added between an apply
// batch's read pass and its write (batches of two trees) makes the write
// judge the batch anew: the changed tree stays whole with its child, the
// other goes with every event (found again in the write transaction),
// and the doctor is healthy.
func TestPruneTreeChangedAfterItsReadPass(t *testing.T) {
	l, clk, p := openTest(t)
	trees := settledTrees(t, l, clk, 4)
	other := secondLedger(t, p, clk)
	SetPruneBatch(l, 2, 0)
	hooks.pruneBatch = func(batch int, phase string) error {
		if batch == 0 && phase == "read" {
			_, err := other.Create(CreateParams{ParentID: trees[1][2]})
			return err
		}
		return nil
	}
	defer func() { hooks.pruneBatch = nil }()
	cutoff := timeAt(clk.now + 1)
	rep, err := l.Prune(PruneOptions{EndedBefore: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if want := (PruneReport{TreesExamined: 4, TreesRemoved: 3, TreesRetained: 1, TasksRemoved: 9, EventsRemoved: 27, Applied: true}); rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	if treeState(t, l, trees[0]) != 0 || treeState(t, l, trees[1]) != 3 || treeState(t, l, trees[2]) != 0 || treeState(t, l, trees[3]) != 0 {
		t.Fatal("a tree was not removed or kept whole")
	}
	healthy(t, l)
}

// secondLedger opens another ledger on the file at p, on the same clock,
// as a second process would; it is closed when the test ends.
func secondLedger(t *testing.T, p string, clk *scriptedClock) *Ledger {
	t.Helper()
	other, err := Open(p, withClockSeconds(Options{AllowExternalACL: onWindows}, clk.read))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// TestPruneTreeFinishedAfterItsReadPass: a tree the read pass kept (a
// child still queued) is finished before the batch's write, which then
// judges it removable: the write finds that tree's events itself (the
// read pass did not look for them), so every event of it goes and the
// doctor finds no event naming a removed task.
func TestPruneTreeFinishedAfterItsReadPass(t *testing.T) {
	l, clk, p := openTest(t)
	first := pruneTree(t, l, clk, "settled", "settled", "settled")
	late := pruneTree(t, l, clk, "settled", "")
	other := secondLedger(t, p, clk)
	SetPruneBatch(l, 2, 0)
	cutoff := timeAt(clk.now + 1)
	hooks.pruneBatch = func(batch int, phase string) error {
		if batch == 0 && phase == "read" {
			if _, err := other.CloseTask(late[1], StatusSucceeded, NoCode); err != nil {
				return err
			}
			_, err := other.SetDelivery(late[1], DeliveryNotApplicable, NoCode)
			return err
		}
		return nil
	}
	defer func() { hooks.pruneBatch = nil }()
	rep, err := l.Prune(PruneOptions{EndedBefore: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if want := (PruneReport{TreesExamined: 2, TreesRemoved: 2, TasksRemoved: 5, EventsRemoved: 15, Applied: true}); rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	if treeState(t, l, first) != 0 || treeState(t, l, late) != 0 {
		t.Fatal("a tree was not removed")
	}
	healthy(t, l)
}
