package ledger

import (
	"crypto/rand"
	"fmt"
	"math"
	"strings"
)

// Task and delivery state sets, and the reason-code registry
// (spec/task-state-guard.md §2, §3), as the text stored in the database.
var (
	taskStates     = []string{string(StatusQueued), string(StatusRunning), string(StatusSucceeded), string(StatusFailed), string(StatusTimedOut), string(StatusCancelled)}
	deliveryStates = []string{string(DeliveryPending), string(DeliveryDelivered), string(DeliveryFailed), string(DeliveryNotApplicable)}

	taskCodes = map[string][]string{
		string(StatusSucceeded): {string(CodeCompleted), string(CodeWorkerCompleted)},
		string(StatusFailed):    {string(CodeWorkerFailed)},
		string(StatusTimedOut):  {string(CodeDeadlineExceeded), string(CodeRestartStale)},
		string(StatusCancelled): {string(CodeCallerCancelled)},
	}
	deliveryCodes = map[string][]string{
		string(DeliveryDelivered):     {string(CodeTransportAcknowledged)},
		string(DeliveryFailed):        {string(CodeDeliveryGraceExpired), string(CodeTransportFailed)},
		string(DeliveryNotApplicable): {string(CodeInternalTask)},
	}
)

// Code is a reason code recorded with a task or delivery transition
// (spec/task-state-guard.md §3). Only the registered codes below are
// accepted, each for its own states; NoCode records none.
type Code string

// The registered reason codes, by the state they may close with.
const (
	NoCode Code = ""

	CodeCompleted        Code = "completed"         // succeeded
	CodeWorkerCompleted  Code = "worker_completed"  // succeeded
	CodeWorkerFailed     Code = "worker_failed"     // failed
	CodeDeadlineExceeded Code = "deadline_exceeded" // timed_out
	CodeRestartStale     Code = "restart_stale"     // timed_out
	CodeCallerCancelled  Code = "caller_cancelled"  // cancelled

	CodeTransportAcknowledged Code = "transport_acknowledged" // delivered
	CodeDeliveryGraceExpired  Code = "delivery_grace_expired" // failed
	CodeTransportFailed       Code = "transport_failed"       // failed
	CodeInternalTask          Code = "internal_task"          // not_applicable
)

// optional is the code as the writers take it: nil for NoCode.
func (c Code) optional() *string {
	if c == NoCode {
		return nil
	}
	s := string(c)
	return &s
}

// Codes the ledger writes on its own events.
const (
	codeCreated          = "created"
	codeStarted          = "started"
	codeDeadlineExceeded = "deadline_exceeded"
	codeRestartStale     = "restart_stale"
	codeGraceExpired     = "delivery_grace_expired"
	codeInternalTask     = "internal_task"
)

// Event kinds of the task_events table.
const (
	eventCreated            = "created"
	eventTaskTransition     = "task_transition"
	eventDeliveryTransition = "delivery_transition"
)

func isTaskState(s string) bool     { return contains(taskStates, s) }
func isDeliveryState(s string) bool { return contains(deliveryStates, s) }

// isTerminal reports whether s (a Status, or a state as stored text) is
// one of the four terminal task states.
func isTerminal[S ~string](s S) bool {
	t := Status(s)
	return t == StatusSucceeded || t == StatusFailed || t == StatusTimedOut || t == StatusCancelled
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// validCodeSyntax reports whether code matches ^[a-z0-9][a-z0-9._-]{0,63}$.
func validCodeSyntax(code string) bool {
	if len(code) == 0 || len(code) > 64 {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// taskCodeAllowed reports whether code is registered for the terminal task
// state status.
func taskCodeAllowed(status, code string) bool { return contains(taskCodes[status], code) }

// deliveryCodeAllowed reports whether code is registered for the closed
// delivery state status.
func deliveryCodeAllowed(status, code string) bool { return contains(deliveryCodes[status], code) }

// checkCode validates an optional reason code against the syntax and the
// registry. nil means none and is always accepted; a given code is checked
// even when it is empty (which fails the syntax), as the reference does.
func checkCode(code *string, allowed func(string, string) bool, status string) error {
	if code == nil {
		return nil
	}
	if !validCodeSyntax(*code) || !allowed(status, *code) {
		return invalidInput("reason code is not registered for the requested state")
	}
	return nil
}

// ValidPayloadHash reports whether h is a payload fingerprint Create
// accepts: exactly 64 lowercase hex characters (a SHA-256 in hex).
func ValidPayloadHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !isLowerHex(h[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }

func isHex(c byte) bool {
	return isLowerHex(c) || (c >= 'A' && c <= 'F')
}

// validSeconds reports whether v is a finite, non-negative number of seconds.
func validSeconds(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

// ParseTaskID returns the canonical lowercase 8-4-4-4-12 form of a task id.
//
// Accepted spellings (divergence L3): the canonical form in either case, the
// 32 hex digits without dashes, either of those in braces, or either of those
// after a "urn:uuid:" prefix. Everything else is ErrInvalidInput, including
// the oddities Python's uuid.UUID tolerates: dashes in other places, a "0x"
// prefix, surrounding or inner spaces, underscores, signs and non-ASCII text.
func ParseTaskID(s string) (string, error) {
	body := s
	switch {
	case strings.HasPrefix(body, "urn:uuid:"):
		body = body[len("urn:uuid:"):]
	case len(body) >= 2 && body[0] == '{' && body[len(body)-1] == '}':
		body = body[1 : len(body)-1]
	}
	var hex []byte
	switch len(body) {
	case 32:
		hex = []byte(body)
	case 36:
		if body[8] != '-' || body[13] != '-' || body[18] != '-' || body[23] != '-' {
			return "", invalidInput("malformed task id")
		}
		hex = make([]byte, 0, 32)
		for i := 0; i < 36; i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				continue
			}
			hex = append(hex, body[i])
		}
	default:
		return "", invalidInput("malformed task id")
	}
	for i, c := range hex {
		if !isHex(c) {
			return "", invalidInput("malformed task id")
		}
		if c >= 'A' && c <= 'F' {
			hex[i] = c + ('a' - 'A')
		}
	}
	h := string(hex)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

// isCanonicalID reports whether s is already a canonical lowercase UUID.
func isCanonicalID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !isLowerHex(c) {
			return false
		}
	}
	return true
}

// randomTaskID returns a random version-4 UUID in canonical form.
func randomTaskID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", internal("random id", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
