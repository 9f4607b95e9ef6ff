package testfixtures

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSidecarsBesideFixtures: the recordings are kept as the Python
// tools wrote them. A -wal, -shm or -journal beside a recorded ledger
// means some test or tool opened it in place with SQLite (it happened
// once, and the sidecars were committed); tests must open copies.
func TestNoSidecarsBesideFixtures(t *testing.T) {
	root := Dir(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if strings.HasSuffix(d.Name(), suffix) {
				t.Errorf("%s: a SQLite sidecar in the recorded fixtures", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
