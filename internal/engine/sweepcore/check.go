package sweepcore

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/stateguard/stateguard/internal/engine/sweeprules"
)

// ErrNotACommand is the rule a value breaks that is no command: nil, or a
// pointer to one.
var ErrNotACommand = errors.New("not a command of this package (nil, or a pointer to one)")

// invalid is the answer to a command that breaks a rule: ERROR, a fixed
// reason naming the field (never its value), nothing read or written.
func invalid(field string, rule error) Result {
	err := fmt.Errorf("%s: %w", field, rule)
	return Result{Word: WordError, Reason: err.Error(), Fault: InvalidCommand, Err: err}
}

// ioFailure is the answer to a file system operation that failed: ERROR
// with the fixed reason, wrapping the operating system's error number when
// cause holds one (never the cause's text, which names the path).
func ioFailure(reason string, cause error) Result {
	var errno syscall.Errno
	if errors.As(cause, &errno) {
		return Result{Word: WordError, Reason: reason, Fault: IOFailure, Err: fmt.Errorf("%s: %w", reason, errno)}
	}
	return errorResult(reason)
}

// errorResult is ERROR for an I/O failure whose cause is not at hand.
func errorResult(reason string) Result {
	return Result{Word: WordError, Reason: reason, Fault: IOFailure, Err: errors.New(reason)}
}

// notAMapping is ERROR for a part of the file that is not a mapping.
func notAMapping(reason string) Result {
	return Result{Word: WordError, Reason: reason, Fault: NotAMapping, Err: errors.New(reason)}
}

// refusedText is ERROR for the command line's argument text that the
// decision cannot use (the typed commands never reach it: lower refuses
// them first).
func refusedText(reason string) Result {
	return Result{Word: WordError, Reason: reason, Fault: InvalidCommand, Err: errors.New(reason)}
}

// check applies the command line's argument rules (package sweeprules) to
// cmd; the zero Result means it passes. Fields are named as the typed
// commands name them.
func check(cmd Command) (Result, bool) {
	type text struct{ field, s string }
	var texts []text
	switch c := cmd.(type) {
	case Read, Validate:
	case UpsertItem:
		texts = []text{{"UpsertItem.Source", c.Source}, {"UpsertItem.ID", c.ID}, {"UpsertItem.Fields", c.JSON},
			{"UpsertItem.Writer", c.Writer}, {"UpsertItem.Now", c.Now}}
	case CursorGet:
		texts = []text{{"CursorGet.Source", c.Source}}
	case Metrics:
		texts = []text{{"Metrics.Now", c.Now}}
	case CursorAdvance:
		texts = []text{{"CursorAdvance.Source", c.Source}, {"CursorAdvance.To", c.To},
			{"CursorAdvance.PastItem", c.PastItem}, {"CursorAdvance.Writer", c.Writer}, {"CursorAdvance.Now", c.Now}}
	case LeaseAcquire:
		if err := sweeprules.CheckTTL(c.TTLMinutes); err != nil {
			return invalid("LeaseAcquire.TTLMinutes", err), false
		}
		texts = []text{{"LeaseAcquire.Writer", c.Writer}, {"LeaseAcquire.Now", c.Now}}
	case LeaseRelease:
		texts = []text{{"LeaseRelease.Writer", c.Writer}}
	case RunRecord:
		texts = []text{{"RunRecord.Writer", c.Writer}, {"RunRecord.Outcome", c.Outcome},
			{"RunRecord.Counts", c.Counts}, {"RunRecord.Timestamp", c.Timestamp}}
	case ImportLegacy:
		texts = []text{{"ImportLegacy.File", c.File}}
		if c.SourceMap != nil {
			texts = append(texts, text{"ImportLegacy.SourceMap", *c.SourceMap})
		}
	default: // nil, or a pointer to a command
		return invalid("Command", ErrNotACommand), false
	}
	for _, t := range texts {
		if err := sweeprules.CheckText(t.s); err != nil {
			return invalid(t.field, err), false
		}
	}
	if field, now, stamps := stampedNow(cmd); stamps {
		if err := sweeprules.CheckNow(now); err != nil {
			return invalid(field, err), false
		}
	}
	if c, isRun := cmd.(RunRecord); isRun {
		if err := sweeprules.CheckOutcome(c.Outcome); err != nil {
			return invalid("RunRecord.Outcome", err), false
		}
	}
	return Result{}, true
}

// stampedNow is the --now of a command that stamps the lease with it.
func stampedNow(cmd Command) (field, now string, stamps bool) {
	switch c := cmd.(type) {
	case UpsertItem:
		return "UpsertItem.Now", c.Now, true
	case CursorAdvance:
		return "CursorAdvance.Now", c.Now, true
	case LeaseAcquire:
		return "LeaseAcquire.Now", c.Now, true
	}
	return "", "", false
}
