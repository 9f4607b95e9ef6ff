package yamlsubset

import "sync/atomic"

// hugePages is whether large fresh buffers ask for huge pages. Off unless
// the process says so: the advice outlives the buffer on the Go heap (see
// adviseHugePages), which only a process that ends after one call (the
// sweep-state command) can ignore.
var hugePages atomic.Bool

// UseHugePages turns the huge-page advice for large read and output
// buffers on or off for the whole process (cmd/sweep-state turns it on,
// through sweepcli.SetOneCallProcess).
func UseHugePages(on bool) { hugePages.Store(on) }

// advise is adviseHugePages, or a test's recorder.
var advise = adviseHugePages

// AdviseHugePages asks the kernel to back b, a large buffer not touched
// yet, with huge pages, if the process turned them on (UseHugePages). The
// engine uses it for the buffer it reads the state file's text into.
func AdviseHugePages(b []byte) {
	if cap(b) >= 4<<20 && hugePages.Load() {
		advise(b[:cap(b)])
	}
}
