// Package sweepstate is the sweep state engine: the only writer of the YAML
// state file of contract sweep-state.md (spec/sweep-state.md).
//
// One engine call is one load, one decision and at most one write:
//
//	load     stat, owner check, read, parse (package yamlsubset), shape
//	         checks, legacy field rename  -> NO-STATE / CORRUPT / ERROR
//	decide   a pure function of (document, command, now) in decide.go
//	write    under the flock of "<state>.lock", atomically (package durable)
//
// Time is an input: a command's Now string, or Engine.Clock when it is
// empty. The decision never reads the wall clock. Timestamps are compared
// with package isotime in exact microseconds.
//
// The command line lives in package cli; cmd/sweep-state is a thin main.
package sweepstate
