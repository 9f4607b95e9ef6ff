package sweepcli

import (
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/storage/outtext"
)

// SetOneCallProcess turns on or off, for the whole process, two uses of
// memory that pay only in a process that ends after one call, as the
// sweep-state command does (its main turns them on before Main):
//   - huge pages for the large buffers a call reads a state file into
//     (and read's payload): on a file of tens of megabytes they spare
//     most of the page faults, but the advice stays on that part of the
//     Go heap after the call, where a later fault may wait for the kernel
//     to compact memory;
//   - memory outside the Go heap for the large chunks of read's payload
//     text, which a pipe then takes by reference on Linux instead of a
//     copy: the Go collector does not count that memory, so a program
//     that read large files in a loop could hold several texts' worth of
//     it between two collections.
//
// Both are off in any other program (the Go API's callers, the tests).
func SetOneCallProcess(on bool) {
	yamlsubset.UseHugePages(on)
	outtext.UseOwnMemory(on)
}
