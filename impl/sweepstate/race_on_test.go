//go:build race

package sweepstate

// raceDetector is true in a -race build.
const raceDetector = true
