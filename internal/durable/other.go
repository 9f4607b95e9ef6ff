//go:build !unix && !windows

package durable

import "os"

// Lock is a held advisory lock; Unlock releases it.
type Lock struct{}

// Acquire always fails: this platform offers no advisory lock, and writing
// without one could interleave two writers.
func Acquire(path string) (*Lock, error) { return nil, ErrUnsupported }

// Unlock does nothing.
func (l *Lock) Unlock() error { return nil }

// OwnedByEffectiveUser is false: without a lock nothing may be written.
func OwnedByEffectiveUser(fi os.FileInfo) bool { return false }

func syncDir(dir string) error { return nil }

// openNonblocking is a plain open; OpenRegular refuses anything that is not
// a regular file.
func openNonblocking(p string) (*os.File, error) { return os.Open(p) }
