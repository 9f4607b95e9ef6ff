package yamlsubset

// SetScanBuffer sets the size ScanItems's buffer starts at and returns
// the one it had.
func SetScanBuffer(n int) int {
	old := scanBuffer
	scanBuffer = n
	return old
}
