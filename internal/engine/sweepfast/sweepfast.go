// Package sweepfast switches off the sweep engine's fast paths (a file in
// the engine's own form split so that only the items a command touches
// are parsed, spec/sweep-state.md 19.2), for the tests that hold the fast
// paths to the general one. Nothing else sets it.
package sweepfast

import "sync/atomic"

var off atomic.Bool

// Off reports whether the fast paths are switched off.
func Off() bool { return off.Load() }

// SetOff switches the fast paths off (true) or on again (false).
func SetOff(v bool) { off.Store(v) }
