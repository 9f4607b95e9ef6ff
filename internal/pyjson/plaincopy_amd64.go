//go:build !purego

package pyjson

// copyPlain is CopyPlain in SSE2 instructions (plaincopy_amd64.s), which
// every amd64 processor has.
//
//go:noescape
func copyPlain(dst []byte, s string) (n int, stopped bool)
