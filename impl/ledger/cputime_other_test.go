//go:build !linux && !darwin

package ledger

// processCPUSeconds is not measured on this platform.
func processCPUSeconds() float64 { return 0 }
