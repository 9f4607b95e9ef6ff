// Package depcheck holds only a test: it proves that the programs under cmd/
// link no code that could open a network connection, depend on nothing
// beyond the standard library, modernc.org/sqlite (with its own
// dependencies) and golang.org/x/sys, and, built as the README installs them
// (CGO_ENABLED=0), are static: no runtime/cgo, no shared library.
package depcheck
