//go:build !amd64 || purego

package pyjson

func copyPlain(dst []byte, s string) (n int, stopped bool) { return copyPlainGo(dst, s) }
