//go:build !linux && !darwin

package main

import "os"

// peakRSSKiB is unknown here (no rusage with a peak RSS); reported as 0.
func peakRSSKiB(*os.ProcessState) int64 { return 0 }
