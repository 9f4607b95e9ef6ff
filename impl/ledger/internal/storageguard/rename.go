package storageguard

import "os"

// linkThenRemove is renameNoReplace where the file system has no such
// rename: the link refuses an existing target; between the two steps the
// file has both names, and a crash there leaves both (the target whole).
func linkThenRemove(from, to string) error {
	if err := os.Link(from, to); err != nil {
		return err
	}
	return os.Remove(from)
}
