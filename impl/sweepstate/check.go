package sweepstate

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/stateguard/stateguard/internal/engine/sweeprules"
)

// ErrInvalidCommand is wrapped by Result.Err for a command that breaks a
// rule the sweep-state command line enforces as misuse (see Command).
var ErrInvalidCommand = errors.New("sweepstate: invalid command")

// invalid is the answer to a command that breaks a rule: ERROR, a fixed
// reason naming the field (never its value), nothing read or written.
func invalid(field string, rule error) Result {
	err := fmt.Errorf("%w: %s: %w", ErrInvalidCommand, field, rule)
	return Result{Word: WordError, Reason: field + ": " + rule.Error(), Err: err}
}

// normalize turns a non-nil pointer to a command into the command; nil (a
// nil interface or a nil pointer) is reported as not ok.
func normalize(cmd Command) (Command, bool) {
	if cmd == nil {
		return nil, false
	}
	if v := reflect.ValueOf(cmd); v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		c, isCmd := v.Elem().Interface().(Command)
		return c, isCmd
	}
	return cmd, true
}

// check applies the command line's argument rules (package sweeprules) to
// cmd; the zero Result means it passes.
func check(cmd Command) (Result, bool) {
	type text struct{ field, s string }
	var texts []text
	switch c := cmd.(type) {
	case Read, Validate:
	case UpsertItem:
		texts = []text{{"UpsertItem.Source", c.Source}, {"UpsertItem.ID", c.ID}, {"UpsertItem.JSON", c.JSON},
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
