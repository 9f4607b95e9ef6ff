package storageguard

import (
	"context"
	"os"
)

// Path is the ledger's resolved database path.
func (g *Guard) Path() string { return g.path }

// PermissionModel names how the platform keeps the files private
// ("posix_mode" or "external_acl").
func (g *Guard) PermissionModel() string { return g.model }

// File is the descriptor the guard holds on the database for the ledger's
// lifetime. Never close it: closing would drop SQLite's POSIX locks.
func (g *Guard) File() *os.File { return g.held.f }

// Holds reports whether info describes the file the guard holds.
func (g *Guard) Holds(info FileInfo) bool { return info.ident == g.ident }

// Release drops the guard's reference to the shared descriptor. Call it
// only after the ledger's SQLite connection is closed.
func (g *Guard) Release() { g.release() }

// Check re-verifies the storage before an operation; see check.
func (g *Guard) Check() error { return g.check() }

// CheckSidecars re-verifies the -journal, -wal and -shm files alone.
func (g *Guard) CheckSidecars() error { return g.checkSidecars() }

// LockDatabaseShared takes (or shares) this process's read lock on the
// database, so that a read-only ledger can keep it across a retry.
func (g *Guard) LockDatabaseShared() error { return g.held.lockDatabaseShared() }

// UnlockDatabaseShared drops one share of the read lock LockDatabaseShared took.
func (g *Guard) UnlockDatabaseShared() { g.held.unlockDatabaseShared() }

// RegularFile reports whether info is a regular file, not a link.
func (i FileInfo) RegularFile() bool { return i.isReg && !i.isLink }

// Size is the file's size in bytes.
func (i FileInfo) Size() int64 { return i.size }

// DBLocked reports whether the view holds the read lock on the database.
func (v *View) DBLocked() bool { return v.dbLocked }

// FS presents the view as a file system of one file, ViewFileName, for
// SQLite's read-only connection.
func (v *View) FS() ViewFS { return ViewFS{v} }

// Size is the database's size as the view presents it.
func (v *View) Size() int64 { return v.size }

// PageSize is the database's page size.
func (v *View) PageSize() int64 { return v.pageSize }

// LockedView takes a view's read locks, waiting up to busyMS, without
// reading the files, so that the wait can be watched alone.
func LockedView(ctx context.Context, g *Guard, busyMS int) (*View, error) {
	v := &View{g: g}
	return v, v.Lock(ctx, busyMS)
}

// HeldLocks counts what this process's read-only views hold on g's
// database: the shares of the database's read lock and the -shm files
// kept open to lock.
func (g *Guard) HeldLocks() (databaseShares, shmFiles int) {
	heldMu.Lock()
	defer heldMu.Unlock()
	return g.held.dbLocks, len(g.held.shms)
}
