package outtext

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the alignment given to a mapping, so that transparent huge
// pages can back all of it where the caller asks for them.
const hugePage = 2 << 20

// mapChunk maps n bytes of fresh private memory, 2 MiB-aligned: whole is
// the mapping, b the empty chunk of capacity exactly n in it (append past
// n moves to Go memory rather than writing beyond). On failure b is nil.
func mapChunk(n int) (whole, b []byte) {
	whole, err := unix.Mmap(-1, 0, n+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	off := 0
	if r := uintptr(unsafe.Pointer(unsafe.SliceData(whole))) % hugePage; r != 0 {
		off = int(hugePage - r)
	}
	return whole, whole[off : off : off+n]
}

func unmap(whole []byte) { _ = unix.Munmap(whole) }

// within reports whether c's memory lies inside whole.
func within(c, whole []byte) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	return p >= lo && p+uintptr(cap(c)) <= lo+uintptr(len(whole))
}

// splice hands b to the pipe f by reference (vmsplice) and returns how
// much it took; ok is false when f takes no more that way (not a pipe, a
// closed reader, a system that forbids it): the caller writes the rest.
// The pipe keeps the pages, not a copy, until its reader has read them:
// b must never be changed again, which a Text's chunk never is.
func splice(f *os.File, b []byte) (n int, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	failed := false
	flags := -1
	err = rc.Write(func(fd uintptr) bool {
		if flags < 0 {
			// vmsplice waits for room even on a non-blocking pipe unless
			// told not to: a non-blocking one must answer EAGAIN, as a
			// write would, so that the poller waits (and the file's write
			// deadline holds) instead of the kernel.
			flags = 0
			if fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK != 0 {
				flags = unix.SPLICE_F_NONBLOCK
			}
		}
		for n < len(b) {
			iov := unix.Iovec{Base: &b[n]}
			iov.SetLen(len(b) - n)
			k, err := unix.Vmsplice(int(fd), []unix.Iovec{iov}, flags)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return false // a non-blocking pipe that is full: wait, then go on
			case err != nil:
				failed = true
				return true
			}
			n += k
			spliced.Add(int64(k))
		}
		return true
	})
	return n, err == nil && !failed
}
