//go:build race

package main

// raceEnabled: the heavy tests start only child processes (go build, pip,
// the binaries), where the race detector has nothing to watch; they skip
// under it.
const raceEnabled = true
