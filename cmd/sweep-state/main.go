// Command sweep-state is the command line of the sweep state engine: the
// only writer of one YAML state file (lease, cursors, items, last run), one
// status word per call. Its contract is spec/sweep-state.md; the README's
// cheat sheet lists the subcommands. To use the engine from Go, import
// github.com/stateguard/stateguard/impl/sweepstate, which this command runs
// (the argument parsing lives in internal/cli/sweepcli and is not importable).
package main

import (
	"os"
	"runtime/debug"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
)

// gcPercent is the GC target of a sweep-state process. One call builds a
// tree that stays live until the process exits, so collecting at the
// default 100 only re-marks that tree as it grows (twice for a 10,000-item
// file); 400 skips those cycles without raising peak memory, since almost
// nothing becomes garbage early (measured on 10,000 items: upsert-item
// 44 -> 35 ms, read 35 -> 26 ms, maxrss 15.5 -> 15.0 MiB).
const gcPercent = 400

// mergeGCPercent is the GC target of a merge (merge, merge-driver): on
// inputs it parses whole (not in the engine's own form, spec 21.7) it
// holds three trees, all live until the process exits, and a collection
// near the end of the parse re-marks them to find almost no garbage
// (100,000 items: one collection of about 0.4 s of CPU for 20 of 240 MB);
// 1000 lets a merge of that size finish without it.
const mergeGCPercent = 1000

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "merge" || os.Args[1] == "merge-driver") {
		debug.SetGCPercent(mergeGCPercent)
	} else {
		debug.SetGCPercent(gcPercent)
	}
	// The process ends after one call, so the huge-page advice on its
	// large buffers cannot slow a later allocation (spec 19.2), nor can
	// memory the collector does not count pile up: read's payload may be
	// memory of its own, which a pipe takes by reference.
	sweepcli.SetOneCallProcess(true)
	os.Exit(sweepcli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
