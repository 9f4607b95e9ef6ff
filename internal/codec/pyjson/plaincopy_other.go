//go:build !amd64 || purego

package pyjson

func copyPlain(dst []byte, s string) (n int, stopped bool) { return copyPlainGo(dst, s) }

// skipPlain leaves every byte to skipRawASCIIWords here.
func skipPlain(s string) (n int, stopped bool) { return 0, false }
