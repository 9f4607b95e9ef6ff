//go:build !unix

package durable

// syncDirChecksPath: without a directory sync there is nothing to open.
const syncDirChecksPath = false
