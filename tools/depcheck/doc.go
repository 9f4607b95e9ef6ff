// Package depcheck holds only a test: it proves that the programs under cmd/
// link no code that could open a network connection and depend on nothing
// beyond the standard library, modernc.org/sqlite (with its own
// dependencies) and golang.org/x/sys.
package depcheck
