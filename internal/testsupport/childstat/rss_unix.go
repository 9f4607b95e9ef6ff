//go:build linux || darwin

package childstat

import (
	"os"
	"runtime"
	"syscall"
)

// PeakRSSKiB is the child's peak resident set size in KiB (Linux reports
// KiB, macOS bytes).
func PeakRSSKiB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
