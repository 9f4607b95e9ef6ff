package pyjson

// CopyPlain copies s into dst sixteen bytes at a time, while both have
// sixteen bytes left, and stops after the block that holds the first byte
// SkipRawASCII stops at (a control character, '"', '\\', DEL or a byte
// above it). It returns that byte's index n in s and stopped true, or, when
// no copied block holds one, the number n of bytes copied, all of which
// SkipRawASCII steps over, and stopped false: the caller reads the rest.
// Bytes of dst after n (up to the end of the block) may have been written.
//
// Read's fast path copies the strings of the usual lines with it: judging
// the bytes and copying them in one pass of vector instructions costs a
// string of a usual length a small part of finding its end, judging it and
// copying it (strings.IndexByte, RawStringEnd, then copy).
func CopyPlain(dst []byte, s string) (n int, stopped bool) {
	return copyPlain(dst, s)
}

// copyPlainGo is CopyPlain in Go, for the systems without copyPlain's
// assembly, and the definition the tests hold the assembly to.
func copyPlainGo(dst []byte, s string) (n int, stopped bool) {
	for n+16 <= len(s) && n+16 <= len(dst) {
		copy(dst[n:n+16], s[n:n+16])
		if j := SkipRawASCII(s[:n+16], n); j < n+16 {
			return j, true
		}
		n += 16
	}
	return n, false
}
