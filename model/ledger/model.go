package ledger

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Error classes. Every error an operation returns wraps exactly one of them.
var (
	ErrInvalidInput  = errors.New("InvalidInput")
	ErrTaskNotFound  = errors.New("TaskNotFound")
	ErrStateConflict = errors.New("StateConflict")
)

// ErrClockBackwards is the StateConflict returned when now is earlier than a
// timestamp the operation depends on.
var ErrClockBackwards = fmt.Errorf("%w: clock moved backwards", ErrStateConflict)

func invalid(why string) error  { return fmt.Errorf("%w: %s", ErrInvalidInput, why) }
func conflict(why string) error { return fmt.Errorf("%w: %s", ErrStateConflict, why) }

var errNotFound = fmt.Errorf("%w: no such task", ErrTaskNotFound)

// Task mirrors one row of the tasks table. Times are Unix seconds; nil
// pointers are NULL.
type Task struct {
	ID                string
	ParentID          *string
	Status            string
	DeliveryStatus    string
	DeliveryRequired  bool
	PayloadHash       *string
	TimeoutSeconds    *float64
	CreatedAt         float64
	StartedAt         *float64
	UpdatedAt         float64
	EndedAt           *float64
	DeadlineAt        *float64
	DeliveryUpdatedAt float64
	TerminalCode      *string
	DeliveryCode      *string
	Version           int64
}

// Clone returns a deep copy (no pointer shared with t).
func (t Task) Clone() Task {
	c := t
	c.ParentID = clonePtr(t.ParentID)
	c.PayloadHash = clonePtr(t.PayloadHash)
	c.TimeoutSeconds = clonePtr(t.TimeoutSeconds)
	c.StartedAt = clonePtr(t.StartedAt)
	c.EndedAt = clonePtr(t.EndedAt)
	c.DeadlineAt = clonePtr(t.DeadlineAt)
	c.TerminalCode = clonePtr(t.TerminalCode)
	c.DeliveryCode = clonePtr(t.DeliveryCode)
	return c
}

// Event kinds.
const (
	EventCreated            = "created"
	EventTaskTransition     = "task_transition"
	EventDeliveryTransition = "delivery_transition"
)

// Event mirrors one row of task_events.
type Event struct {
	Sequence   int64
	TaskID     string
	Kind       string
	From       *string
	To         string
	OccurredAt float64
	Code       *string
}

// CreateParams are the arguments of Create. TaskID is required and must be
// canonical; the other strings are "" when not given.
type CreateParams struct {
	TaskID           string
	ParentID         string
	PayloadHash      string
	TimeoutSeconds   *float64
	DeliveryRequired bool
}

// Model is the whole ledger as plain values: tasks in insertion order and
// the event log. The zero value is an empty ledger.
type Model struct {
	tasks   []Task
	index   map[string]int
	events  []Event
	nextSeq int64
}

// Clone returns an independent copy of m.
func (m *Model) Clone() *Model {
	c := &Model{nextSeq: m.nextSeq, index: make(map[string]int, len(m.index))}
	for i, t := range m.tasks {
		c.tasks = append(c.tasks, t.Clone())
		c.index[t.ID] = i
	}
	for _, e := range m.events {
		e.From = clonePtr(e.From)
		e.Code = clonePtr(e.Code)
		c.events = append(c.events, e)
	}
	return c
}

// Tasks returns copies of all rows ordered by id.
func (m *Model) Tasks() []Task {
	out := make([]Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		out = append(out, t.Clone())
	}
	slices.SortFunc(out, func(a, b Task) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Events returns copies of all events in sequence order.
func (m *Model) Events() []Event {
	out := make([]Event, 0, len(m.events))
	for _, e := range m.events {
		e.From = clonePtr(e.From)
		e.Code = clonePtr(e.Code)
		out = append(out, e)
	}
	return out
}

func (m *Model) lookup(id string) (*Task, bool) {
	i, ok := m.index[id]
	if !ok {
		return nil, false
	}
	return &m.tasks[i], true
}

func (m *Model) appendEvent(taskID, kind string, from *string, to string, at float64, code *string) {
	m.nextSeq++
	m.events = append(m.events, Event{Sequence: m.nextSeq, TaskID: taskID, Kind: kind, From: clonePtr(from), To: to, OccurredAt: at, Code: clonePtr(code)})
}

// checkID validates a canonical id argument.
func checkID(id string) error {
	if !IsCanonicalID(id) {
		return invalid("task id")
	}
	return nil
}

// optionalCode turns "" into nil.
func optionalCode(code string) *string {
	if code == "" {
		return nil
	}
	return &code
}

// checkCode validates an optional reason code for entering state to: nil
// is no code; a given code must be well formed and registered, so an empty
// one never passes.
func checkCode(mach Machine, to string, code *string) error {
	if code == nil {
		return nil
	}
	if !ValidCodeSyntax(*code) || !mach.CodeRegistered(to, *code) {
		return invalid("reason code")
	}
	return nil
}

// Create adds a queued task, or returns the stored one when the id exists
// with identical parent, hash, timeout and delivery flag.
//
// Order of checks: input syntax (InvalidInput); existing id (idempotent
// return, or StateConflict on any difference); parent exists (TaskNotFound);
// parent not created after now (StateConflict, clock moved backwards).
func (m *Model) Create(p CreateParams, now float64) (Task, error) {
	if err := checkID(p.TaskID); err != nil {
		return Task{}, err
	}
	if p.ParentID != "" && !IsCanonicalID(p.ParentID) {
		return Task{}, invalid("parent id")
	}
	if p.PayloadHash != "" && !IsPayloadHash(p.PayloadHash) {
		return Task{}, invalid("payload hash")
	}
	var timeout *float64
	if p.TimeoutSeconds != nil {
		v := *p.TimeoutSeconds
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Task{}, invalid("timeout")
		}
		v += 0 // -0 becomes +0
		timeout = &v
	}
	if !finite(now) {
		return Task{}, invalid("clock")
	}
	parent := optionalCode(p.ParentID)
	hash := optionalCode(p.PayloadHash)
	if t, ok := m.lookup(p.TaskID); ok {
		if eqPtr(t.ParentID, parent) && eqPtr(t.PayloadHash, hash) && eqPtr(t.TimeoutSeconds, timeout) && t.DeliveryRequired == p.DeliveryRequired {
			return t.Clone(), nil
		}
		return Task{}, conflict("task exists with different fields")
	}
	if parent != nil {
		pt, ok := m.lookup(*parent)
		if !ok {
			return Task{}, fmt.Errorf("%w: parent", ErrTaskNotFound)
		}
		if now < pt.CreatedAt {
			return Task{}, ErrClockBackwards
		}
	}
	t := Task{
		ID:                p.TaskID,
		ParentID:          parent,
		Status:            TaskMachine.Initial,
		DeliveryStatus:    DeliveryMachine.Initial,
		DeliveryRequired:  p.DeliveryRequired,
		PayloadHash:       hash,
		TimeoutSeconds:    timeout,
		CreatedAt:         now,
		UpdatedAt:         now,
		DeliveryUpdatedAt: now,
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	m.index[t.ID] = len(m.tasks)
	m.tasks = append(m.tasks, t)
	created := CodeCreated
	m.appendEvent(t.ID, EventCreated, nil, t.Status, now, &created)
	return t.Clone(), nil
}

// Start moves a queued task to running. A running task is returned
// unchanged; a terminal one is a StateConflict.
func (m *Model) Start(id string, now float64) (Task, error) {
	t, err := m.find(id)
	if err != nil {
		return Task{}, err
	}
	if t.Status == StatusRunning {
		return t.Clone(), nil
	}
	edge, ok := TaskMachine.Edge(t.Status, StatusRunning)
	if !ok {
		return Task{}, conflict("task not queued")
	}
	if now < t.UpdatedAt {
		return Task{}, ErrClockBackwards
	}
	var deadline *float64
	if t.TimeoutSeconds != nil {
		d := now + *t.TimeoutSeconds
		if !finite(d) {
			// No time to write: the task cannot start at this clock.
			return Task{}, conflict("deadline beyond the float range")
		}
		deadline = &d
	}
	from := t.Status
	t.Status = StatusRunning
	t.StartedAt = &now
	t.UpdatedAt = now
	t.DeadlineAt = deadline
	t.Version++
	code := edge.Reserved
	m.appendEvent(t.ID, EventTaskTransition, &from, StatusRunning, now, &code)
	return t.Clone(), nil
}

// Heartbeat refreshes updated_at of a running task (no event).
func (m *Model) Heartbeat(id string, now float64) (Task, error) {
	t, err := m.find(id)
	if err != nil {
		return Task{}, err
	}
	if t.Status != StatusRunning {
		return Task{}, conflict("task not running")
	}
	if now < t.UpdatedAt {
		return Task{}, ErrClockBackwards
	}
	t.UpdatedAt = now
	t.Version++
	return t.Clone(), nil
}

// Close moves a task to a terminal state.
//
// Order of checks: id syntax, target state is terminal (InvalidInput);
// unknown id (TaskNotFound); same terminal state already (idempotent return,
// even with an invalid code; the stored code is kept); another terminal state
// (StateConflict); code syntax and registry (InvalidInput); clock
// (StateConflict).
//
// The code "" stands for no code; CloseCode tells the two apart.
func (m *Model) Close(id, status, code string, now float64) (Task, error) {
	return m.CloseCode(id, status, optionalCode(code), now)
}

// CloseCode is Close with the code as an optional value: nil is no code,
// and any given text, the empty string included, is checked.
func (m *Model) CloseCode(id, status string, code *string, now float64) (Task, error) {
	if err := checkID(id); err != nil {
		return Task{}, err
	}
	if !TaskMachine.IsTerminal(status) {
		return Task{}, invalid("task status")
	}
	t, ok := m.lookup(id)
	if !ok {
		return Task{}, errNotFound
	}
	if t.Status == status {
		return t.Clone(), nil
	}
	if _, ok := TaskMachine.Edge(t.Status, status); !ok {
		return Task{}, conflict("task already terminal")
	}
	if err := checkCode(TaskMachine, status, code); err != nil {
		return Task{}, err
	}
	if now < t.UpdatedAt {
		return Task{}, ErrClockBackwards
	}
	m.closeTask(t, status, code, now)
	return t.Clone(), nil
}

func (m *Model) closeTask(t *Task, status string, code *string, now float64) {
	from := t.Status
	t.Status = status
	t.UpdatedAt = now
	t.EndedAt = &now
	t.TerminalCode = clonePtr(code)
	t.Version++
	m.appendEvent(t.ID, EventTaskTransition, &from, status, now, code)
}

// SetDelivery closes the delivery of a terminal task.
//
// Order of checks: id syntax, target is a terminal delivery state
// (InvalidInput); unknown id (TaskNotFound); same delivery state already
// (idempotent return, even with an invalid code); delivery already closed
// differently, task not terminal, or a target the task's kind forbids
// (StateConflict); code (InvalidInput); clock (StateConflict).
//
// The code "" stands for no code; SetDeliveryCode tells the two apart.
func (m *Model) SetDelivery(id, status, code string, now float64) (Task, error) {
	return m.SetDeliveryCode(id, status, optionalCode(code), now)
}

// SetDeliveryCode is SetDelivery with the code as an optional value: nil
// is no code, and any given text, the empty string included, is checked.
func (m *Model) SetDeliveryCode(id, status string, code *string, now float64) (Task, error) {
	if err := checkID(id); err != nil {
		return Task{}, err
	}
	if !DeliveryMachine.IsTerminal(status) {
		return Task{}, invalid("delivery status")
	}
	t, ok := m.lookup(id)
	if !ok {
		return Task{}, errNotFound
	}
	if t.DeliveryStatus == status {
		return t.Clone(), nil
	}
	if _, ok := DeliveryMachine.Edge(t.DeliveryStatus, status); !ok {
		return Task{}, conflict("delivery already closed")
	}
	if !TaskMachine.IsTerminal(t.Status) {
		return Task{}, conflict("task not terminal")
	}
	if !deliveryAllowedForKind(t.DeliveryRequired, status) {
		return Task{}, conflict("delivery state not allowed for this kind of task")
	}
	if err := checkCode(DeliveryMachine, status, code); err != nil {
		return Task{}, err
	}
	if now < *t.EndedAt || now < t.DeliveryUpdatedAt {
		return Task{}, ErrClockBackwards
	}
	m.closeDelivery(t, status, code, now)
	return t.Clone(), nil
}

// deliveryAllowedForKind: a delivery-required task never becomes
// not_applicable; an internal task only becomes not_applicable.
func deliveryAllowedForKind(required bool, status string) bool {
	return required != (status == DeliveryNotApplicable)
}

func (m *Model) closeDelivery(t *Task, status string, code *string, now float64) {
	from := t.DeliveryStatus
	t.DeliveryStatus = status
	t.DeliveryUpdatedAt = now
	t.DeliveryCode = clonePtr(code)
	t.Version++
	m.appendEvent(t.ID, EventDeliveryTransition, &from, status, now, code)
}

// Get returns the task with the given id.
func (m *Model) Get(id string) (Task, error) {
	t, err := m.find(id)
	if err != nil {
		return Task{}, err
	}
	return t.Clone(), nil
}

// ChildrenOf returns the direct children of id ordered by created_at, then
// id. An unknown id is TaskNotFound.
func (m *Model) ChildrenOf(id string) ([]Task, error) {
	if _, err := m.find(id); err != nil {
		return nil, err
	}
	var out []Task
	for _, t := range m.tasks {
		if t.ParentID != nil && *t.ParentID == id {
			out = append(out, t.Clone())
		}
	}
	slices.SortFunc(out, byCreatedThenID)
	return out, nil
}

func byCreatedThenID(a, b Task) int {
	if a.CreatedAt != b.CreatedAt {
		if a.CreatedAt < b.CreatedAt {
			return -1
		}
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

func (m *Model) find(id string) (*Task, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	t, ok := m.lookup(id)
	if !ok {
		return nil, errNotFound
	}
	return t, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
