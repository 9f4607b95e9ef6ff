//go:build unix

package sweepcli_test

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSKiB is the child's peak resident set size in KiB (Linux reports
// Maxrss in KiB, darwin in bytes).
func peakRSSKiB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
