package yamlsubset

import "syscall"

// adviseHugePages asks Linux to back b, memory not touched yet, with
// transparent huge pages: one fault per 2 MiB instead of one per 4 KiB.
// The bytes and every answer are the same either way; where huge pages
// are off, or b's start is not page-aligned (a large allocation always
// is), nothing changes. Not free beyond b: the advice stays on that part
// of the Go heap after b is collected, and under the kernel's default
// defrag setting a fault there may compact memory first (the reason the
// Go runtime stopped advising its own heap). A short-lived
// CLI does not see it; a long-running process that reads large files
// through the engine may.
func adviseHugePages(b []byte) {
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
