//go:build linux || darwin

package main

import (
	"os"
	"runtime"
	"syscall"
)

// usage returns a finished child's CPU time (user + system) in
// milliseconds and its peak RSS in MiB (ru_maxrss is KiB on Linux, bytes
// on macOS).
func usage(ps *os.ProcessState) (cpuMS, rssMiB float64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0
	}
	cpuMS = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	rssMiB = float64(ru.Maxrss) / 1024
	if runtime.GOOS == "darwin" {
		rssMiB /= 1024
	}
	return cpuMS, rssMiB
}
