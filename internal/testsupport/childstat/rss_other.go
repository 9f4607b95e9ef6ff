//go:build !linux && !darwin

package childstat

import "os"

// PeakRSSKiB is unknown here (no rusage with a peak RSS); reported as 0.
func PeakRSSKiB(*os.ProcessState) int64 { return 0 }
