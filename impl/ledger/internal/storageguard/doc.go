// Package storageguard is the ledger's storage boundary: it checks (and,
// for a writable ledger, prepares) where a ledger lives, and gives a
// read-only ledger its view of the database.
//
// Open resolves the path without trusting links, refuses directories
// others may write to, network file systems and database or sidecar files
// that are links, irregular or shared, makes missing directories private,
// and holds one descriptor on the database for the ledger's lifetime (so
// that no other open in the process drops SQLite's POSIX locks). Check
// runs before each operation. A View presents the database with the
// committed frames of its -wal laid over it, for SQLite to read as a
// rollback-mode file, and notices when the files change under a read.
// The platform files (storage_*.go, netfs_*.go, rename_*.go, rolock_*.go)
// hold what differs between Linux, macOS and Windows.
//
// Refusals are made with package ledgererr, so package ledger's error
// classes match them with errors.Is. Hooks holds the seams the ledger's
// tests set.
package storageguard
