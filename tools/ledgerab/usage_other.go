//go:build !linux && !darwin

package main

import "os"

// usage is not measured on this platform.
func usage(*os.ProcessState) (cpuMS, rssMiB float64) { return 0, 0 }
