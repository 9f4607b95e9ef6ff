package ledger

// PruneReport holds counts only, never ids.
type PruneReport struct {
	TreesExamined int
	TreesRemoved  int
	TreesRetained int
	TasksRemoved  int
	EventsRemoved int
	DryRun        bool
	Applied       bool
}

// Prune removes every finished tree that ended before endedBefore: a tree
// is a task without a parent and all its descendants; it is finished when
// every task in it is terminal, its delivery is in a terminal delivery
// state (delivered, failed or not_applicable) and it ended strictly
// before endedBefore. The roots that are themselves finished are the
// trees examined; each is removed whole, with every event of its tasks,
// or retained whole. A dry run counts the same and changes nothing. A
// time that is not finite is InvalidInput.
func (m *Model) Prune(endedBefore float64, dryRun bool) (PruneReport, error) {
	if !finite(endedBefore) {
		return PruneReport{}, invalid("time")
	}
	rep := PruneReport{DryRun: dryRun, Applied: !dryRun}
	children := map[string][]string{}
	for _, t := range m.tasks {
		if t.ParentID != nil {
			children[*t.ParentID] = append(children[*t.ParentID], t.ID)
		}
	}
	finished := func(t *Task) bool {
		return TaskMachine.IsTerminal(t.Status) && DeliveryMachine.IsTerminal(t.DeliveryStatus) &&
			t.EndedAt != nil && *t.EndedAt < endedBefore
	}
	removed := map[string]bool{}
	for i := range m.tasks {
		root := &m.tasks[i]
		if root.ParentID != nil || !finished(root) {
			continue
		}
		rep.TreesExamined++
		tree := []string{root.ID}
		whole := true
		for j := 0; j < len(tree) && whole; j++ {
			for _, c := range children[tree[j]] {
				ct, _ := m.lookup(c)
				if !finished(ct) {
					whole = false
					break
				}
				tree = append(tree, c)
			}
		}
		if !whole {
			rep.TreesRetained++
			continue
		}
		rep.TreesRemoved++
		rep.TasksRemoved += len(tree)
		for _, id := range tree {
			removed[id] = true
		}
	}
	for _, e := range m.events {
		if removed[e.TaskID] {
			rep.EventsRemoved++
		}
	}
	if dryRun || len(removed) == 0 {
		return rep, nil
	}
	tasks := m.tasks[:0:0]
	m.index = map[string]int{}
	for _, t := range m.tasks {
		if !removed[t.ID] {
			m.index[t.ID] = len(tasks)
			tasks = append(tasks, t)
		}
	}
	m.tasks = tasks
	events := m.events[:0:0]
	for _, e := range m.events {
		if !removed[e.TaskID] {
			events = append(events, e)
		}
	}
	m.events = events
	return rep, nil
}
