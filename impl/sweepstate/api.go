package sweepstate

// This package is the typed face of the engine's core (one package under
// internal/, which the sweep-state command calls directly): lower.go turns
// a typed command into the core's form, api.go runs it and converts the
// core's answer into Result, core.go gives the merge (merge.go,
// mergefast.go) the core's load rules and answers under the names it uses.
// commands.go, metrics.go, payload.go and readtext.go hold the public
// types; their constants repeat the core's, and core_test.go holds them
// equal.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
)

// Engine runs commands against state files.
type Engine struct {
	// Clock supplies "now" for lease stamps when a command's Now is the
	// zero time. Nil means the system clock. It is read once per call,
	// before the decision, never inside it.
	Clock func() time.Time
}

// Run executes cmd against the state file at path: one load, one decision,
// at most one write. Mutating commands hold the file lock throughout and
// wait for it without a time limit, as the sweep-state command does. Run is
// RunContext with context.Background().
func (e *Engine) Run(path string, cmd Command) Result {
	return e.RunContext(context.Background(), path, cmd)
}

// RunContext is Run whose wait for the file lock ends with ctx. Once ctx
// is done, RunContext writes nothing: a context that ends before the lock
// is held, or before the write begins, answers ERROR with Result.Err set to
// ctx.Err() and leaves the file as it was (a lock file it created may
// stay). A context that ends after the write began does not undo it.
// A command that breaks a rule (see Command) answers before any file is
// touched.
func (e *Engine) RunContext(ctx context.Context, path string, cmd Command) Result {
	args, failed := lower(cmd)
	if failed != nil {
		return *failed
	}
	return fromCore(sweepcore.Run(ctx, e.Clock, path, args))
}

// MaxFileSize caps the state file and the legacy file the engine reads:
// far above any sweep's file (a few hundred bytes an item), far below
// what would exhaust memory. A larger state file is CORRUPT (never overwritten); a larger
// legacy file imports nothing.
const MaxFileSize = 256 << 20

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

// faultErrors are the sentinels Result.Err wraps for each kind of ERROR
// the core answers; Ended's error is the context's own.
var faultErrors = [...]error{
	sweepcore.InvalidCommand: ErrInvalidCommand,
	sweepcore.IOFailure:      ErrIO,
	sweepcore.NotAMapping:    ErrNotAMapping,
	sweepcore.Ended:          nil,
}

// fromCore is the core's answer as this package gives it: the same word,
// reason and counts, the payload behind Payload's methods, and an ERROR's
// error wrapped in this package's sentinel for its kind.
func fromCore(r sweepcore.Result) Result {
	res := Result{Word: Word(r.Word), Payload: Payload{r.Payload}, Reason: r.Reason, Metrics: (*StateMetrics)(r.Metrics), Err: r.Err}
	if sentinel := faultErrors[r.Fault]; sentinel != nil {
		res.Err = fmt.Errorf("%w: %w", sentinel, r.Err)
	}
	return res
}
