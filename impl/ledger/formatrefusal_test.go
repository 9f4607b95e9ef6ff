//go:build linux || darwin

package ledger

import (
	"encoding/binary"
	"testing"

	"github.com/stateguard/stateguard/internal/storage/walfile"
)

// TestUnsupportedFormatWithWALLeavesFilesUnchanged: a file header
// value SQLite does not support (a schema format number above 4) is
// StateConflict (11.4) whether or not a -wal lies beside the file; with a
// killed writer's -wal the refusal must not checkpoint the log into the
// file or delete it (9.5). The view reads the header too and meets the
// same SQLite error, which is not SQLITE_CORRUPT or SQLITE_NOTADB.
func TestUnsupportedFormatWithWALLeavesFilesUnchanged(t *testing.T) {
	states, _ := crashStates(t)
	st := states["wal-alone"]
	pageSize := int(binary.BigEndian.Uint16(st.db[16:18]))
	for at := walfile.HeaderSize; at+walfile.FrameHeaderSize+pageSize <= len(st.wal); at += walfile.FrameHeaderSize + pageSize {
		if binary.BigEndian.Uint32(st.wal[at:]) == 1 {
			t.Fatal("page 1 is in the -wal: the file's header would not be read")
		}
	}
	db := append([]byte(nil), st.db...)
	binary.BigEndian.PutUint32(db[44:], 5)
	c := st
	c.db = db
	refusedUntouched(t, c)
}
