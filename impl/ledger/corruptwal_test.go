//go:build linux || darwin

package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/internal/storage/walfile"
)

// TestCorruptRefusalWithWALLeavesFilesUnchanged: a v2 file whose -wal holds
// a killed writer's committed frames, with one page outside the log
// damaged. Whenever the writable open refuses such a file (a damaged
// schema page), the database and its -wal are byte for byte as they were
// and no file is added or removed: a writable connection would have
// checkpointed the log into the refused file on close and deleted it.
// Pages the open never reads are opened normally; at least one damaged
// page must be refused, or the test shows nothing.
func TestCorruptRefusalWithWALLeavesFilesUnchanged(t *testing.T) {
	states, _ := crashStates(t)
	db, wal := states["wal-alone"].db, states["wal-alone"].wal
	pageSize := int(binary.BigEndian.Uint16(db[16:18]))
	inLog := map[uint32]bool{}
	for at := walfile.HeaderSize; at+walfile.FrameHeaderSize+pageSize <= len(wal); at += walfile.FrameHeaderSize + pageSize {
		inLog[binary.BigEndian.Uint32(wal[at:])] = true
	}
	refused := 0
	for page := 1; page <= len(db)/pageSize; page++ {
		if inLog[uint32(page)] {
			continue
		}
		t.Run(fmt.Sprintf("page %d", page), func(t *testing.T) {
			damaged := append([]byte(nil), db...)
			start := (page - 1) * pageSize
			if page == 1 {
				start += 100 // keep the file header: still an SQLite file
			}
			for i := start; i < page*pageSize; i++ {
				damaged[i] = 0xff
			}
			p := writeCrashFiles(t, crashFiles{db: damaged, wal: wal})
			before := dirNames(t, filepath.Dir(p))
			l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
			if err == nil {
				l.Close()
				return
			}
			if !errors.Is(err, ErrStateConflict) {
				t.Fatalf("writable open: %v, want StateConflict or success", err)
			}
			refused++
			filesAsBefore(t, p, crashFiles{db: damaged, wal: wal}, before)
		})
	}
	if refused == 0 {
		t.Fatal("no damaged page was refused: the test shows nothing")
	}
}
