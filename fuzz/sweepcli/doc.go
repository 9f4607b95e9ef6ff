// Package sweepcli holds the native fuzz target of the sweep-state command
// line's trust boundary, argv: go test ./fuzz/sweepcli -fuzz FuzzArgv.
package sweepcli
