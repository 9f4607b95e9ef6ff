//go:build linux || darwin

package ledger

import "syscall"

// processCPUSeconds is the process's user+system CPU time; benchmarks
// report it per op because wall time on a shared machine is noisy.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
