package outtext

import "sync/atomic"

var spliced atomic.Int64

// Spliced is how many bytes WriteTo has handed to pipes by reference in
// this process: the tests' proof that a pipe was written that way.
func Spliced() int64 { return spliced.Load() }
