//go:build !linux

package storageguard

import "os"

// HaveReadLocks: without descriptor-owned locks, taking a lock here would
// share the process's POSIX locks with SQLite and dropping it would drop
// SQLite's, so a read-only view relies on detecting changes alone (12.4).
const HaveReadLocks = false

func readLock(*os.File, int64, int64) error { return nil }
func readUnlock(*os.File, int64, int64)     {}
