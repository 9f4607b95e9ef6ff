// Package sweepfast is the option that makes the sweep engine load every
// state file whole, with the general parser, instead of by the fast paths
// (a file in the engine's own form split so that only the items a command
// touches are parsed, spec/sweep-state.md 19.2). It rides on the context
// of one call (impl/sweepstate's Engine.RunContext), so it is never state
// of the process, and only tests construct it: those that hold the fast
// paths to the general one.
package sweepfast

import "context"

type wholeFileKey struct{}

// WithWholeFile returns ctx with the option set: a call made with it
// loads the state file whole.
func WithWholeFile(ctx context.Context) context.Context {
	return context.WithValue(ctx, wholeFileKey{}, true)
}

// WholeFile reports whether ctx carries the option.
func WholeFile(ctx context.Context) bool {
	on, _ := ctx.Value(wholeFileKey{}).(bool)
	return on
}
