package sweepstate

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/stateguard/stateguard/internal/engine/sweepargs"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
)

// ErrInvalidCommand is wrapped by Result.Err for a command that breaks a
// rule the sweep-state command line enforces as misuse (see Command).
var ErrInvalidCommand = errors.New("sweepstate: invalid command")

// ErrIO is wrapped by Result.Err when the state file, its directory or its
// lock file could not be reached, locked or written.
var ErrIO = errors.New("sweepstate: the state file could not be locked or written")

// ErrNotAMapping is wrapped by Result.Err when the state file parses but a
// part the command needs (items, sources, a source entry) is not a
// mapping, as only a hand edit makes it.
var ErrNotAMapping = errors.New("sweepstate: a part of the state file is not a mapping")

// invalid is the answer to a command that breaks a rule: ERROR, a fixed
// reason naming the field (never its value), nothing read or written.
func invalid(field string, rule error) Result {
	err := fmt.Errorf("%w: %s: %w", ErrInvalidCommand, field, rule)
	return Result{Word: WordError, Reason: field + ": " + rule.Error(), Err: err}
}

// ioFailure is the answer to a file system operation that failed: ERROR
// with the fixed reason, wrapping ErrIO and the operating system's error
// number when cause holds one (never the cause's text, which names the
// path).
func ioFailure(reason string, cause error) Result {
	var errno syscall.Errno
	if errors.As(cause, &errno) {
		return Result{Word: WordError, Reason: reason, Err: fmt.Errorf("%w: %s: %w", ErrIO, reason, errno)}
	}
	return errorResult(reason)
}

// errorResult is ERROR for an I/O failure whose cause is not at hand.
func errorResult(reason string) Result {
	return Result{Word: WordError, Reason: reason, Err: fmt.Errorf("%w: %s", ErrIO, reason)}
}

// notAMapping is ERROR for a part of the file that is not a mapping.
func notAMapping(reason string) Result {
	return Result{Word: WordError, Reason: reason, Err: fmt.Errorf("%w: %s", ErrNotAMapping, reason)}
}

// refusedText is ERROR for the command line's argument text that the
// decision cannot use (the typed commands never reach it: lower refuses
// them first).
func refusedText(reason string) Result {
	return Result{Word: WordError, Reason: reason, Err: fmt.Errorf("%w: %s", ErrInvalidCommand, reason)}
}

// check applies the command line's argument rules (package sweeprules) to
// cmd; the zero Result means it passes. Fields are named as the typed
// commands name them.
func check(cmd sweepargs.Command) (Result, bool) {
	type text struct{ field, s string }
	var texts []text
	switch c := cmd.(type) {
	case sweepargs.Read, sweepargs.Validate:
	case sweepargs.UpsertItem:
		texts = []text{{"UpsertItem.Source", c.Source}, {"UpsertItem.ID", c.ID}, {"UpsertItem.Fields", c.JSON},
			{"UpsertItem.Writer", c.Writer}, {"UpsertItem.Now", c.Now}}
	case sweepargs.CursorGet:
		texts = []text{{"CursorGet.Source", c.Source}}
	case sweepargs.Metrics:
		texts = []text{{"Metrics.Now", c.Now}}
	case sweepargs.CursorAdvance:
		texts = []text{{"CursorAdvance.Source", c.Source}, {"CursorAdvance.To", c.To},
			{"CursorAdvance.PastItem", c.PastItem}, {"CursorAdvance.Writer", c.Writer}, {"CursorAdvance.Now", c.Now}}
	case sweepargs.LeaseAcquire:
		if err := sweeprules.CheckTTL(c.TTLMinutes); err != nil {
			return invalid("LeaseAcquire.TTLMinutes", err), false
		}
		texts = []text{{"LeaseAcquire.Writer", c.Writer}, {"LeaseAcquire.Now", c.Now}}
	case sweepargs.LeaseRelease:
		texts = []text{{"LeaseRelease.Writer", c.Writer}}
	case sweepargs.RunRecord:
		texts = []text{{"RunRecord.Writer", c.Writer}, {"RunRecord.Outcome", c.Outcome},
			{"RunRecord.Counts", c.Counts}, {"RunRecord.Timestamp", c.Timestamp}}
	case sweepargs.ImportLegacy:
		texts = []text{{"ImportLegacy.File", c.File}}
		if c.SourceMap != nil {
			texts = append(texts, text{"ImportLegacy.SourceMap", *c.SourceMap})
		}
	default: // nil, or a pointer to a command
		return invalid("Command", errNotACommand), false
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
	if c, isRun := cmd.(sweepargs.RunRecord); isRun {
		if err := sweeprules.CheckOutcome(c.Outcome); err != nil {
			return invalid("RunRecord.Outcome", err), false
		}
	}
	return Result{}, true
}

// stampedNow is the --now of a command that stamps the lease with it.
func stampedNow(cmd sweepargs.Command) (field, now string, stamps bool) {
	switch c := cmd.(type) {
	case sweepargs.UpsertItem:
		return "UpsertItem.Now", c.Now, true
	case sweepargs.CursorAdvance:
		return "CursorAdvance.Now", c.Now, true
	case sweepargs.LeaseAcquire:
		return "LeaseAcquire.Now", c.Now, true
	}
	return "", "", false
}
