// Package crashfs is a test file system for power cuts and I/O faults.
// Mounted through FUSE, it serves the current state of every
// file and directory as any file system does, and keeps beside it the
// durable state by the strict persistence model POSIX promises at least:
//
//   - a file's data becomes durable when that file is fsynced (fsync or
//     fdatasync);
//   - a directory entry (create, mkdir, rename, unlink) becomes durable
//     only when the directory holding it is fsynced;
//   - everything else is lost at a cut.
//
// A cut is taken after the k-th state-changing operation: the durable
// tree at that moment is kept, and a test writes it out to a real
// directory and checks it with the same binaries. Writes since a file's
// last sync can also be kept in part (torn), and operations can be made
// to fail (EIO, ENOSPC).
//
// The process that serves a mount must not map files of that mount (SQLite
// maps the -shm): a page fault on such a mapping cannot be preempted, so a
// garbage collection's stop-the-world waits for it while the serving
// goroutines wait for the collection. Tests run SQLite in child processes.
//
// Linux only, and for tests and tools only: nothing under cmd/ may link it
// (tools/depcheck checks that cmd/ links no module outside its list).
package crashfs
