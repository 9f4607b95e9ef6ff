//go:build !purego

package pyjson

// copyPlain is CopyPlain in SSE2 instructions (plaincopy_amd64.s), which
// every amd64 processor has.
//
//go:noescape
func copyPlain(dst []byte, s string) (n int, stopped bool)

// skipPlain is copyPlain without the copy: the index of the first byte of
// s CopyPlain would stop at, and true, when a whole block of sixteen holds
// it; otherwise the length of the whole blocks, and false.
//
//go:noescape
func skipPlain(s string) (n int, stopped bool)
