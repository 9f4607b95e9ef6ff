package yamlsubset

// AdviseHugePages asks the kernel to back b, a large buffer not touched
// yet, with huge pages (see adviseHugePages for what that costs beyond
// the buffer). The engine uses it for the buffer it reads the state
// file's text into.
func AdviseHugePages(b []byte) {
	if cap(b) >= 4<<20 {
		adviseHugePages(b[:cap(b)])
	}
}
