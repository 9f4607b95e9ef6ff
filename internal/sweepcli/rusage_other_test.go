//go:build !unix

package sweepcli_test

import "os"

// peakRSSKiB is unknown off Unix; the metric then reads 0.
func peakRSSKiB(ps *os.ProcessState) int64 { return 0 }
