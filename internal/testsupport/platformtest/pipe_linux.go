package platformtest

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Pipe is a pipe whose write end blocks, as a command's stdout does, or
// Go's own kind (os.Pipe: non-blocking, through the poller).
func Pipe(t testing.TB, blocking bool) (r, w *os.File) {
	t.Helper()
	if !blocking {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return r, w
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
}
