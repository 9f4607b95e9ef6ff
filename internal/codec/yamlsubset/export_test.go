package yamlsubset

// SetScanBuffer sets the size ScanItems's buffer starts at and returns
// the one it had.
func SetScanBuffer(n int) int {
	old := scanBuffer
	scanBuffer = n
	return old
}

// SetReadBuffer sets the size ReadJSON's buffer starts at and returns the
// one it had.
func SetReadBuffer(n int) int {
	old := readBuffer
	readBuffer = n
	return old
}

// RecordAdvice makes the huge-page advice count its calls in *n instead of
// advising, and returns the restore.
func RecordAdvice(n *int) (restore func()) {
	old, on := advise, hugePages.Load()
	advise = func([]byte) { *n++ }
	return func() { advise = old; hugePages.Store(on) }
}
