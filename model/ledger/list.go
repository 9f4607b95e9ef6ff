package ledger

import (
	"slices"
	"strings"
)

// List page sizes: the default when none is given, and the largest.
const (
	ListDefaultLimit = 100
	ListMaxLimit     = 1000
)

// ListFilter selects tasks for List. Every field that is set must hold
// (and), each list matches any of its values (or); the zero value matches
// every task.
type ListFilter struct {
	Statuses      []string // task states; none means any
	Deliveries    []string // delivery states; none means any
	UpdatedBefore *float64 // updated_at < value
	EndedBefore   *float64 // ended_at < value (so the task is terminal)
	ParentID      string   // canonical id of the direct parent; "" means any
	After         string   // canonical id: only tasks whose id sorts after it
	Limit         int      // page size, 1 to ListMaxLimit; 0 means ListDefaultLimit
}

// List returns one page of the tasks that match f, in ascending id order
// (byte order of the canonical text), starting after f.After, at most
// f.Limit of them, and next: the id to pass as After for the following
// page, or "" when no matching task follows the page. Ids need not exist:
// After is a position, and a parent no task has selects nothing. Unknown
// states, ids that are not canonical, a non-finite time or a limit out of
// range are InvalidInput.
func (m *Model) List(f ListFilter) (page []Task, next string, err error) {
	for _, s := range f.Statuses {
		if !TaskMachine.HasState(s) {
			return nil, "", invalid("task state")
		}
	}
	for _, s := range f.Deliveries {
		if !DeliveryMachine.HasState(s) {
			return nil, "", invalid("delivery state")
		}
	}
	for _, p := range []*float64{f.UpdatedBefore, f.EndedBefore} {
		if p != nil && !finite(*p) {
			return nil, "", invalid("time")
		}
	}
	for _, id := range []string{f.ParentID, f.After} {
		if id != "" && !IsCanonicalID(id) {
			return nil, "", invalid("task id")
		}
	}
	limit := f.Limit
	if limit == 0 {
		limit = ListDefaultLimit
	}
	if limit < 1 || limit > ListMaxLimit {
		return nil, "", invalid("page size")
	}
	var match []Task
	for _, t := range m.tasks {
		if listed(t, f) {
			match = append(match, t.Clone())
		}
	}
	slices.SortFunc(match, func(a, b Task) int { return strings.Compare(a.ID, b.ID) })
	if len(match) > limit {
		return match[:limit], match[limit-1].ID, nil
	}
	return match, "", nil
}

// listed reports whether t passes every part of f.
func listed(t Task, f ListFilter) bool {
	switch {
	case len(f.Statuses) > 0 && !slices.Contains(f.Statuses, t.Status),
		len(f.Deliveries) > 0 && !slices.Contains(f.Deliveries, t.DeliveryStatus),
		f.UpdatedBefore != nil && !(t.UpdatedAt < *f.UpdatedBefore),
		f.EndedBefore != nil && (t.EndedAt == nil || !(*t.EndedAt < *f.EndedBefore)),
		f.ParentID != "" && (t.ParentID == nil || *t.ParentID != f.ParentID),
		f.After != "" && t.ID <= f.After:
		return false
	}
	return true
}
