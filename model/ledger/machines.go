// Package ledger is the executable model of the task-state-guard ledger
// (spec/task-state-guard.md): the task and delivery machines, the reason-code
// registry, every operation as a pure function of (model, arguments, now),
// restart reconciliation, and the doctor's invariants as a Checker over plain
// rows.
//
// The model does no I/O and reads no clock: `now` is always an argument. It
// shares no code with impl/ledger; only tests bring the two together.
//
// Ids: the model takes canonical ids only (lowercase 8-4-4-4-12 hex). Any
// other spelling is InvalidInput here; callers that want the ledger's
// lenient UUID spellings canonicalise before calling the model. Create never
// invents an id: the caller passes the id the ledger generated.
package ledger

import "slices"

// Task states.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusTimedOut  = "timed_out"
	StatusCancelled = "cancelled"
)

// Delivery states.
const (
	DeliveryPending       = "pending"
	DeliveryDelivered     = "delivered"
	DeliveryFailed        = "failed"
	DeliveryNotApplicable = "not_applicable"
)

// Reserved codes the ledger writes on its own events.
const (
	CodeCreated = "created"
	CodeStarted = "started"
)

// Registered reason codes used by reconciliation.
const (
	CodeDeadlineExceeded     = "deadline_exceeded"
	CodeRestartStale         = "restart_stale"
	CodeDeliveryGraceExpired = "delivery_grace_expired"
	CodeInternalTask         = "internal_task"
)

// Transition is one allowed edge of a machine. Codes are the reason codes a
// caller may attach when entering To; Reserved is the code the ledger itself
// writes on this edge ("" when the caller's code is used).
type Transition struct {
	From     string
	To       string
	Codes    []string
	Reserved string
	Guard    string // precondition beyond the source state, for readers
}

// Machine describes one state machine as data. The model's own transition
// logic and the diagram generator read the same tables.
type Machine struct {
	Name     string
	Initial  string
	States   []string // in display order
	Terminal []string // states that never change again
	Edges    []Transition
}

var terminalTaskCodes = map[string][]string{
	StatusSucceeded: {"completed", "worker_completed"},
	StatusFailed:    {"worker_failed"},
	StatusTimedOut:  {CodeDeadlineExceeded, CodeRestartStale},
	StatusCancelled: {"caller_cancelled"},
}

var deliveryCodes = map[string][]string{
	DeliveryDelivered:     {"transport_acknowledged"},
	DeliveryFailed:        {CodeDeliveryGraceExpired, "transport_failed"},
	DeliveryNotApplicable: {CodeInternalTask},
}

func buildTaskMachine() Machine {
	terminal := []string{StatusSucceeded, StatusFailed, StatusTimedOut, StatusCancelled}
	m := Machine{
		Name:     "task",
		Initial:  StatusQueued,
		States:   append([]string{StatusQueued, StatusRunning}, terminal...),
		Terminal: terminal,
		Edges:    []Transition{{From: StatusQueued, To: StatusRunning, Reserved: CodeStarted}},
	}
	for _, from := range []string{StatusQueued, StatusRunning} {
		for _, to := range terminal {
			m.Edges = append(m.Edges, Transition{From: from, To: to, Codes: terminalTaskCodes[to]})
		}
	}
	return m
}

func buildDeliveryMachine() Machine {
	terminal := []string{DeliveryDelivered, DeliveryFailed, DeliveryNotApplicable}
	m := Machine{
		Name:     "delivery",
		Initial:  DeliveryPending,
		States:   append([]string{DeliveryPending}, terminal...),
		Terminal: terminal,
	}
	for _, to := range terminal {
		guard := "task terminal, delivery-required task"
		if to == DeliveryNotApplicable {
			guard = "task terminal, internal task"
		}
		m.Edges = append(m.Edges, Transition{From: DeliveryPending, To: to, Codes: deliveryCodes[to], Guard: guard})
	}
	return m
}

// TaskMachine is the task lifecycle: queued -> running, and from queued or
// running to one of the four terminal states.
var TaskMachine = buildTaskMachine()

// DeliveryMachine is the delivery lifecycle: pending -> delivered | failed |
// not_applicable (only once the task is terminal; see SetDelivery).
var DeliveryMachine = buildDeliveryMachine()

// HasState reports whether s is one of the machine's states.
func (m Machine) HasState(s string) bool { return slices.Contains(m.States, s) }

// IsTerminal reports whether s is a terminal state of the machine.
func (m Machine) IsTerminal(s string) bool { return slices.Contains(m.Terminal, s) }

// Edge returns the transition from -> to, if the machine allows it.
func (m Machine) Edge(from, to string) (Transition, bool) {
	for _, e := range m.Edges {
		if e.From == from && e.To == to {
			return e, true
		}
	}
	return Transition{}, false
}

// CodesFor returns the caller codes registered for entering state to (the
// same on every edge into it), or nil.
func (m Machine) CodesFor(to string) []string {
	for _, e := range m.Edges {
		if e.To == to {
			return e.Codes
		}
	}
	return nil
}

// CodeRegistered reports whether code may accompany a transition into to.
func (m Machine) CodeRegistered(to, code string) bool {
	return slices.Contains(m.CodesFor(to), code)
}

// ValidCodeSyntax reports whether code matches ^[a-z0-9][a-z0-9._-]{0,63}$.
func ValidCodeSyntax(code string) bool {
	if len(code) < 1 || len(code) > 64 {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if i == 0 && !alnum {
			return false
		}
		if !alnum && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// IsCanonicalID reports whether s is a UUID in canonical form: lowercase hex
// in groups 8-4-4-4-12.
func IsCanonicalID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isLowerHex(c) {
				return false
			}
		}
	}
	return true
}

// IsPayloadHash reports whether s is 64 lowercase hex characters.
func IsPayloadHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }
