//go:build !race

package sweepcore

// raceDetector is true in a -race build.
const raceDetector = false
