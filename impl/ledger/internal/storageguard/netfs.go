package storageguard

// FSStat is what the system's statfs tells of a directory's file system:
// on Linux its magic number, on macOS its type name.
type FSStat struct {
	Magic    uint32
	TypeName string
}

// errNetworkFS refuses a ledger whose directory is on a network file
// system: SQLite's WAL mode keeps its index in memory shared through the
// -shm file, which hosts cannot share, and byte-range locks there are as
// good as the server's lock service (spec/task-state-guard.md §11.2).
var errNetworkFS = invalidInput("database directory is on a network file system")

// checkLocalFS refuses dir when it is on a network file system. A
// statfs that fails refuses too: the ledger cannot tell where it is.
func checkLocalFS(dir string) error {
	stat := statDirFS
	if Hooks.Statfs != nil {
		stat = Hooks.Statfs
	}
	st, err := stat(dir)
	if err != nil {
		return internal("statfs database directory", err)
	}
	if onNetworkFS(st) {
		return errNetworkFS
	}
	return nil
}
