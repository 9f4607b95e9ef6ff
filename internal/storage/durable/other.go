//go:build !unix && !windows

package durable

import "os"

// Lock is a held advisory lock; Unlock releases it.
type Lock struct{}

// Acquire always fails: this platform offers no advisory lock, and writing
// without one could interleave two writers.
func Acquire(path string) (*Lock, error) { return nil, ErrUnsupported }

func openLock(path string) (*Lock, error) { return nil, ErrUnsupported }

func (l *Lock) tryLock() (bool, error) { return false, ErrUnsupported }

func (l *Lock) close() {}

// Unlock does nothing.
func (l *Lock) Unlock() error { return nil }

// OwnedByEffectiveUser is false: without a lock nothing may be written.
func OwnedByEffectiveUser(fi os.FileInfo) bool { return false }

func syncDir(dir string) error { return nil }

// openNonblocking is a plain open; OpenRegular refuses anything that is not
// a regular file.
func openNonblocking(p string) (*os.File, error) { return os.Open(p) }

// refusedWhileOpen is false: a rename replaces an open file here.
func refusedWhileOpen(error) bool { return false }
