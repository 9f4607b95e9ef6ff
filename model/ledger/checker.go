package ledger

import (
	"math"
	"slices"
)

// Counts are the row-level findings of the doctor (the keys that do not
// depend on SQLite itself: quick_check, schema and doctor errors are storage
// matters the model cannot see).
//
// Each inconsistency count is a number of tasks: a task with several
// findings of one kind counts once for that kind. Every parent cycle counts
// once, however many tasks are on it.
type Counts struct {
	TaskCount                   int
	EventCount                  int
	TaskStatusCounts            map[string]int // all six task states
	DeliveryStatusCounts        map[string]int // all four delivery states
	OrphanCount                 int
	ParentCycleCount            int
	ForeignKeyErrorCount        int
	StateInconsistencyCount     int
	TimestampInconsistencyCount int
	EventInconsistencyCount     int
}

// Healthy reports whether every finding count is zero.
func (c Counts) Healthy() bool {
	return c.OrphanCount == 0 && c.ParentCycleCount == 0 && c.ForeignKeyErrorCount == 0 &&
		c.StateInconsistencyCount == 0 && c.TimestampInconsistencyCount == 0 && c.EventInconsistencyCount == 0
}

// Check states every row invariant the doctor enforces over an arbitrary set
// of task rows and events (not necessarily reachable ones) and counts the
// findings per doctor key.
//
// Foreign-key errors are task rows whose parent has no row plus events whose
// task has no row; orphans are the former only.
func Check(tasks []Task, events []Event) Counts {
	c := Counts{
		TaskCount:            len(tasks),
		EventCount:           len(events),
		TaskStatusCounts:     map[string]int{},
		DeliveryStatusCounts: map[string]int{},
	}
	for _, s := range TaskMachine.States {
		c.TaskStatusCounts[s] = 0
	}
	for _, s := range DeliveryMachine.States {
		c.DeliveryStatusCounts[s] = 0
	}
	byID := make(map[string]*Task, len(tasks))
	for i := range tasks {
		byID[tasks[i].ID] = &tasks[i]
	}
	for _, t := range tasks {
		if TaskMachine.HasState(t.Status) {
			c.TaskStatusCounts[t.Status]++
		}
		if DeliveryMachine.HasState(t.DeliveryStatus) {
			c.DeliveryStatusCounts[t.DeliveryStatus]++
		}
		if t.ParentID != nil {
			if _, ok := byID[*t.ParentID]; !ok {
				c.OrphanCount++
				c.ForeignKeyErrorCount++
			}
		}
	}
	ordered := slices.Clone(events)
	slices.SortStableFunc(ordered, func(a, b Event) int {
		switch {
		case a.Sequence < b.Sequence:
			return -1
		case a.Sequence > b.Sequence:
			return 1
		}
		return 0
	})
	eventsOf := map[string][]Event{}
	missing := map[string]bool{}
	for _, e := range ordered {
		if _, ok := byID[e.TaskID]; !ok {
			c.ForeignKeyErrorCount++
			// Events of a missing task break the chain once per id (8.1).
			if !missing[e.TaskID] {
				missing[e.TaskID] = true
				c.EventInconsistencyCount++
			}
			continue
		}
		eventsOf[e.TaskID] = append(eventsOf[e.TaskID], e)
	}
	c.ParentCycleCount = countParentCycles(tasks, byID)
	for _, t := range tasks {
		if !stateConsistent(t) {
			c.StateInconsistencyCount++
		}
		var parent *Task
		if t.ParentID != nil {
			parent = byID[*t.ParentID]
		}
		if !timestampsConsistent(t, parent) {
			c.TimestampInconsistencyCount++
		}
		if !slices.EqualFunc(eventsOf[t.ID], ExpectedEvents(t), sameEvent) {
			c.EventInconsistencyCount++
		}
	}
	return c
}

// countParentCycles counts the distinct cycles of the parent relation (each
// task has at most one parent, so every cycle is found by walking up).
func countParentCycles(tasks []Task, byID map[string]*Task) int {
	const (
		unseen = iota
		onPath
		done
	)
	mark := make(map[string]int, len(tasks))
	cycles := 0
	for _, start := range tasks {
		if mark[start.ID] != unseen {
			continue
		}
		var path []string
		id := start.ID
		for {
			if mark[id] == onPath {
				cycles++ // a new cycle closes on the current walk
				break
			}
			if mark[id] == done {
				break
			}
			mark[id] = onPath
			path = append(path, id)
			t := byID[id]
			if t.ParentID == nil {
				break
			}
			if _, ok := byID[*t.ParentID]; !ok {
				break
			}
			id = *t.ParentID
		}
		for _, p := range path {
			mark[p] = done
		}
	}
	return cycles
}

// ImpliedTransitions is the number of transitions the row's values imply:
// a start, a terminal close, a delivery close.
func ImpliedTransitions(t Task) int64 {
	var n int64
	if t.StartedAt != nil {
		n++
	}
	if TaskMachine.IsTerminal(t.Status) {
		n++
	}
	if DeliveryMachine.IsTerminal(t.DeliveryStatus) {
		n++
	}
	return n
}

func stateConsistent(t Task) bool {
	if !IsCanonicalID(t.ID) || (t.ParentID != nil && !IsCanonicalID(*t.ParentID)) {
		return false
	}
	if !TaskMachine.HasState(t.Status) || !DeliveryMachine.HasState(t.DeliveryStatus) {
		return false
	}
	terminal := TaskMachine.IsTerminal(t.Status)
	deliveryClosed := DeliveryMachine.IsTerminal(t.DeliveryStatus)
	if t.TerminalCode != nil && (!terminal || !TaskMachine.CodeRegistered(t.Status, *t.TerminalCode)) {
		return false
	}
	if t.DeliveryCode != nil && (!deliveryClosed || !DeliveryMachine.CodeRegistered(t.DeliveryStatus, *t.DeliveryCode)) {
		return false
	}
	if deliveryClosed && (!terminal || !deliveryAllowedForKind(t.DeliveryRequired, t.DeliveryStatus)) {
		return false
	}
	if t.PayloadHash != nil && !IsPayloadHash(*t.PayloadHash) {
		return false
	}
	if t.TimeoutSeconds != nil && (!finite(*t.TimeoutSeconds) || *t.TimeoutSeconds < 0) {
		return false
	}
	if terminal != (t.EndedAt != nil) {
		return false
	}
	return t.Version >= ImpliedTransitions(t)
}

func timestampsConsistent(t Task, parent *Task) bool {
	for _, p := range []*float64{&t.CreatedAt, &t.UpdatedAt, &t.DeliveryUpdatedAt, t.StartedAt, t.EndedAt, t.DeadlineAt} {
		if p != nil && !finite(*p) {
			return false
		}
	}
	notBefore := func(p *float64, ref float64) bool { return p == nil || *p >= ref }
	created := t.CreatedAt
	if t.UpdatedAt < created || t.DeliveryUpdatedAt < created || !notBefore(t.StartedAt, created) || !notBefore(t.EndedAt, created) {
		return false
	}
	if t.StartedAt != nil && (t.UpdatedAt < *t.StartedAt || !notBefore(t.EndedAt, *t.StartedAt)) {
		return false
	}
	if TaskMachine.IsTerminal(t.Status) && (t.EndedAt == nil || t.UpdatedAt != *t.EndedAt) {
		return false
	}
	if t.DeadlineAt != nil {
		if t.StartedAt == nil || t.TimeoutSeconds == nil || *t.DeadlineAt != *t.StartedAt+*t.TimeoutSeconds {
			return false
		}
	} else if t.StartedAt != nil && t.TimeoutSeconds != nil {
		return false // a started task with a timeout has its deadline
	}
	switch t.Status {
	case StatusQueued:
		if t.StartedAt != nil || t.DeadlineAt != nil {
			return false
		}
	case StatusRunning:
		if t.StartedAt == nil {
			return false
		}
	}
	if t.DeliveryStatus == DeliveryPending && t.DeliveryUpdatedAt != created {
		return false
	}
	if DeliveryMachine.IsTerminal(t.DeliveryStatus) && (t.EndedAt == nil || t.DeliveryUpdatedAt < *t.EndedAt) {
		return false
	}
	// A parent without a finite creation time is no reference: the parent
	// itself is counted, its children are not judged against it (8.3).
	if parent != nil && finite(parent.CreatedAt) && created < parent.CreatedAt {
		return false
	}
	return true
}

// ExpectedEvents is the event chain the row implies, without sequence
// numbers: created; queued->running (started) if started; the terminal
// transition (from running, or queued if never started) with the task's code
// at ended_at; pending-><delivery> with the delivery code at
// delivery_updated_at.
func ExpectedEvents(t Task) []Event {
	str := func(s string) *string { return &s }
	out := []Event{{TaskID: t.ID, Kind: EventCreated, To: StatusQueued, OccurredAt: t.CreatedAt, Code: str(CodeCreated)}}
	if t.StartedAt != nil {
		out = append(out, Event{TaskID: t.ID, Kind: EventTaskTransition, From: str(StatusQueued), To: StatusRunning, OccurredAt: *t.StartedAt, Code: str(CodeStarted)})
	}
	if TaskMachine.IsTerminal(t.Status) {
		from := StatusQueued
		if t.StartedAt != nil {
			from = StatusRunning
		}
		at := math.NaN() // never equal: a terminal row without ended_at has no valid chain
		if t.EndedAt != nil {
			at = *t.EndedAt
		}
		out = append(out, Event{TaskID: t.ID, Kind: EventTaskTransition, From: str(from), To: t.Status, OccurredAt: at, Code: clonePtr(t.TerminalCode)})
	}
	if t.DeliveryStatus != DeliveryPending {
		out = append(out, Event{TaskID: t.ID, Kind: EventDeliveryTransition, From: str(DeliveryPending), To: t.DeliveryStatus, OccurredAt: t.DeliveryUpdatedAt, Code: clonePtr(t.DeliveryCode)})
	}
	return out
}

// sameEvent compares everything but the sequence number.
func sameEvent(a, b Event) bool {
	return a.TaskID == b.TaskID && a.Kind == b.Kind && eqPtr(a.From, b.From) && a.To == b.To &&
		a.OccurredAt == b.OccurredAt && eqPtr(a.Code, b.Code)
}
