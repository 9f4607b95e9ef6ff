//go:build linux || darwin

package ledger

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
	"github.com/stateguard/stateguard/internal/storage/walfile"
)

// crashFiles is a ledger as a crash can leave it: the database and the
// sidecars present (a nil sidecar is absent).
type crashFiles struct {
	db, wal, shm []byte
}

func (c crashFiles) withWAL(wal []byte) crashFiles { c.wal = wal; return c }
func (c crashFiles) withSHM(shm []byte) crashFiles { c.shm = shm; return c }

// writeCrashFiles lays c out in a fresh private directory, 0600 each.
func writeCrashFiles(t *testing.T, c crashFiles) string {
	t.Helper()
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	for suffix, b := range map[string][]byte{"": c.db, "-wal": c.wal, "-shm": c.shm} {
		if b == nil {
			continue
		}
		if err := os.WriteFile(p+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// captureFiles reads the files of a ledger some connection still holds
// open, as a SIGKILL at this moment would leave them.
func captureFiles(t *testing.T, p string) crashFiles {
	t.Helper()
	read := func(suffix string) []byte {
		b, err := os.ReadFile(p + suffix)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return crashFiles{db: read(""), wal: read("-wal"), shm: read("-shm")}
}

// crashStates builds, deterministically, every state of the files a crash
// can leave, with the task ids written along the way. A writer ledger
// writes; a second connection with automatic checkpoints off keeps the
// writer's close from checkpointing, so the -wal and -shm stay as a killed
// writer leaves them; the files are copied at chosen moments and then cut
// or damaged as a crash or an older log would have them.
func crashStates(t *testing.T) (map[string]crashFiles, []string) {
	t.Helper()
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	var ids []string
	create := func(w *Ledger, parent string) string {
		task, err := w.Create(CreateParams{ParentID: parent, Internal: len(ids)%2 != 0})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
		return task.ID
	}
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	root := create(w, "")
	create(w, root)
	if _, err := w.Start(create(w, root)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	states := map[string]crashFiles{}
	clean := captureFiles(t, p)
	if clean.wal != nil || clean.shm != nil {
		t.Fatal("a closed ledger left sidecars")
	}
	states["clean"] = clean

	keeper := checkpointKeeper(t, p)
	defer keeper.Close()
	w, err = Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(2000)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.CloseTask(ids[2], StatusSucceeded, ""); err != nil {
		t.Fatal(err)
	}
	mid := create(w, ids[1])
	if _, err := w.Start(mid); err != nil {
		t.Fatal(err)
	}
	create(w, "")
	pair := captureFiles(t, p)
	if len(pair.wal) == 0 || pair.shm == nil || string(pair.db) != string(clean.db) {
		t.Fatal("expected committed frames in the -wal and an unchanged database")
	}
	frame := int64(walfile.FrameHeaderSize + binary.BigEndian.Uint32(pair.wal[8:]))
	states["pair"] = pair
	states["wal-alone"] = pair.withSHM(nil)
	states["shm-alone"] = pair.withWAL(nil)
	states["wal-empty"] = pair.withWAL([]byte{}).withSHM(nil)
	states["wal-short-header"] = pair.withWAL(pair.wal[:20]).withSHM(nil)
	torn := pair.wal[:int64(len(pair.wal))-frame/2]
	states["torn-tail"] = pair.withWAL(torn).withSHM(nil)
	states["torn-tail-dead-pair"] = pair.withWAL(torn)
	states["commit-frame-missing"] = pair.withWAL(pair.wal[:int64(len(pair.wal))-frame]).withSHM(nil)
	flip := func(b []byte, at int64) []byte {
		c := append([]byte(nil), b...)
		c[at] ^= 0x5a
		return c
	}
	states["header-salt-changed"] = pair.withWAL(flip(pair.wal, 16)).withSHM(nil)
	states["frame-salt-changed"] = pair.withWAL(flip(pair.wal, walfile.HeaderSize+3*frame+8)).withSHM(nil)
	states["frame-page-changed"] = pair.withWAL(flip(pair.wal, walfile.HeaderSize+2*frame+100)).withSHM(nil)

	// A checkpoint copies everything into the database; the next write
	// starts the log again from its beginning with new salts, so the
	// frames after it are an earlier generation's.
	if _, err := keeper.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		t.Fatal(err)
	}
	create(w, root)
	gen := captureFiles(t, p)
	if len(gen.wal) != len(pair.wal) || string(gen.wal[16:24]) == string(pair.wal[16:24]) {
		t.Fatal("expected a restarted log over the old frames")
	}
	states["earlier-generation"] = gen
	states["earlier-generation-wal-alone"] = gen.withSHM(nil)
	return states, ids
}

// checkpointKeeper opens a second connection to p, with automatic
// checkpoints off, which keeps a writer's close from checkpointing, so
// that the -wal and -shm stay as a killed writer leaves them.
func checkpointKeeper(t *testing.T, p string) *sql.DB {
	t.Helper()
	keeper, err := sql.Open("sqlite", fileURI(p, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	keeper.SetMaxOpenConns(1)
	if _, err := keeper.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		keeper.Close()
		t.Fatal(err)
	}
	return keeper
}

// ledgerAnswers is everything the read commands answer on a ledger, as
// text: the doctor's report, a dry run, get of every id and children of
// the first.
func ledgerAnswers(t *testing.T, l *Ledger, ids []string) string {
	t.Helper()
	var b strings.Builder
	rep, err := l.Doctor()
	fmt.Fprintf(&b, "doctor %s %v\n", reportJSON(rep), err)
	rr, err := l.reconcileFloat(600, 600, true)
	fmt.Fprintf(&b, "dry run %s %v\n", reconcileJSON(rr), err)
	for _, id := range ids {
		task, err := l.Get(id)
		js, _ := json.Marshal(task)
		fmt.Fprintf(&b, "get %s %v\n", js, err)
	}
	kids, err := l.ChildrenOf(ids[0])
	js, _ := json.Marshal(kids)
	fmt.Fprintf(&b, "children %s %v\n", js, err)
	return b.String()
}

// writerAnswers opens a copy of c for writing (SQLite recovers the -wal)
// and answers the same reads.
func writerAnswers(t *testing.T, c crashFiles, ids []string) string {
	t.Helper()
	w, err := Open(writeCrashFiles(t, c), Options{AllowExternalACL: onWindows, Clock: fixedClock(200000)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return ledgerAnswers(t, w, ids)
}

// TestReadOnlyCrashStates: every file state a crash can leave is
// read, read-only, as exactly what a writer sees after SQLite's recovery,
// and nothing in the directory changes.
func TestReadOnlyCrashStates(t *testing.T) {
	states, ids := crashStates(t)
	wantTasks := map[string]int{
		"clean": 3, "pair": 5, "wal-alone": 5, "shm-alone": 3, "wal-empty": 3, "wal-short-header": 3,
		"torn-tail": 4, "torn-tail-dead-pair": 4, "commit-frame-missing": 4, "header-salt-changed": 3,
		"earlier-generation": 6, "earlier-generation-wal-alone": 6,
	}
	names := make([]string, 0, len(states))
	for name := range states {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := states[name]
		t.Run(name, func(t *testing.T) {
			p := writeCrashFiles(t, c)
			before := snapshotDir(t, filepath.Dir(p))
			l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(200000)})
			if err != nil {
				t.Fatalf("read-only open: %v", err)
			}
			got := ledgerAnswers(t, l, ids)
			rep, _ := l.Doctor()
			l.Close()
			if !sameSnapshot(before, snapshotDir(t, filepath.Dir(p))) {
				t.Fatal("the read-only reads changed the directory")
			}
			if want := writerAnswers(t, c, ids); got != want {
				t.Fatalf("read-only answers\n%s\nwriter answers\n%s", got, want)
			}
			if !rep.Healthy {
				t.Fatalf("unhealthy: %s", reportJSON(rep))
			}
			if n, ok := wantTasks[name]; ok && rep.TaskCount != n {
				t.Fatalf("%d tasks, want %d", rep.TaskCount, n)
			}
		})
	}
}

// TestReadOnlyViewIsCheckpointImage compares the view byte for byte with
// the database SQLite itself makes of the same files: a writer connection
// recovers the -wal and checkpoints it into the file. Only bytes 18-19
// differ (the view reads them as 1).
func TestReadOnlyViewIsCheckpointImage(t *testing.T) {
	states, _ := crashStates(t)
	for name, c := range states {
		p := writeCrashFiles(t, c)
		g, err := storageguard.Open(p, storageguard.Options{AllowExternalACL: onWindows, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		v, err := storageguard.NewView(g, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		image := make([]byte, v.Size())
		n, err := v.ReadAt(image, 0)
		if err != nil || int64(n) != v.Size() {
			t.Fatalf("%s: read %d of %d: %v", name, n, v.Size(), err)
		}
		// The same bytes read in pieces that start inside pages (SQLite
		// reads the change counter at offset 24 on its own), around bytes
		// 18-19, and across the end.
		var pieces []byte
		for off := int64(0); off < v.Size(); off += 1000 {
			buf := make([]byte, min(1000, v.Size()-off))
			k, err := v.ReadAt(buf, off)
			if err != nil {
				t.Fatalf("%s: read at %d: %v", name, off, err)
			}
			pieces = append(pieces, buf[:k]...)
		}
		if string(pieces) != string(image) {
			t.Fatalf("%s: the view read in 1000-byte pieces differs from one read", name)
		}
		for _, r := range [][2]int64{{0, 18}, {18, 1}, {19, 1}, {10, 20}, {v.PageSize() / 2, v.PageSize() + 100}, {v.Size() - 1, 1}, {v.Size() - 10, 100}, {v.Size(), 1}} {
			buf := make([]byte, r[1])
			k, err := v.ReadAt(buf, r[0])
			want := image[min(r[0], v.Size()):min(r[0]+r[1], v.Size())]
			if string(buf[:k]) != string(want) || (err == io.EOF) != (r[0]+r[1] > v.Size()) || (err != nil && err != io.EOF) {
				t.Fatalf("%s: %d bytes at %d: %d read, %v", name, r[1], r[0], k, err)
			}
		}
		v.Release()
		v.Close()
		g.Release()
		if image[18] != 1 || image[19] != 1 {
			t.Fatalf("%s: bytes 18-19 read as %d %d", name, image[18], image[19])
		}
		image[18], image[19] = 2, 2

		q := writeCrashFiles(t, c)
		db, err := sql.Open("sqlite", fileURI(q, "mode=rw"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		db.Close()
		want, err := os.ReadFile(q)
		if err != nil {
			t.Fatal(err)
		}
		if string(image) != string(want) {
			t.Fatalf("%s: view (%d bytes) differs from SQLite's checkpoint (%d bytes)", name, len(image), len(want))
		}
	}
}

// walWordOrder is the byte order of a -wal's checksum words: big-endian
// when the magic number's low bit is set.
func walWordOrder(wal []byte) binary.ByteOrder {
	if binary.BigEndian.Uint32(wal)&1 == 1 {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// walChecksum carries SQLite's -wal checksum (s0, s1) on over b, a
// multiple of 8 bytes long.
func walChecksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i < len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

// resealLog recomputes the cumulative checksums of a -wal's frames from
// frame first on, after a test edited their pages, so that SQLite's rules
// accept them again.
func resealLog(wal []byte, pageSize, first int) {
	order := walWordOrder(wal)
	frameSize := walfile.FrameHeaderSize + pageSize
	prev := walfile.HeaderSize - 8
	if first > 0 {
		prev = walfile.HeaderSize + (first-1)*frameSize + 16
	}
	s0, s1 := binary.BigEndian.Uint32(wal[prev:]), binary.BigEndian.Uint32(wal[prev+4:])
	for at := walfile.HeaderSize + first*frameSize; at+frameSize <= len(wal); at += frameSize {
		s0, s1 = walChecksum(order, wal[at:at+8], s0, s1)
		s0, s1 = walChecksum(order, wal[at+walfile.FrameHeaderSize:at+frameSize], s0, s1)
		binary.BigEndian.PutUint32(wal[at+16:], s0)
		binary.BigEndian.PutUint32(wal[at+20:], s1)
	}
}

// TestReadOnlyRefusesLoggedPageOneNotInWAL: a page 1 in the -wal whose
// header no longer says WAL mode (bytes 18-19) is refused by a read-only
// open as InvalidInput (spec 12.5), as the file's own header would be.
func TestReadOnlyRefusesLoggedPageOneNotInWAL(t *testing.T) {
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer checkpointKeeper(t, p).Close()
	// Enough tasks to grow the file: its page count lives on page 1.
	for i := 0; i < 100; i++ {
		if _, err := w.Create(CreateParams{}); err != nil {
			t.Fatal(err)
		}
	}
	c := captureFiles(t, p).withSHM(nil)
	pageSize := int(binary.BigEndian.Uint32(c.wal[8:]))
	frameSize := walfile.FrameHeaderSize + pageSize
	last := -1
	for i := 0; walfile.HeaderSize+(i+1)*frameSize <= len(c.wal); i++ {
		if binary.BigEndian.Uint32(c.wal[walfile.HeaderSize+i*frameSize:]) == 1 {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no page 1 in the -wal")
	}
	c.wal = append([]byte(nil), c.wal...)
	page := walfile.HeaderSize + last*frameSize + walfile.FrameHeaderSize
	c.wal[page+18], c.wal[page+19] = 1, 1
	resealLog(c.wal, pageSize, last)
	// The edit is only seen if the resealed log still reaches page 1.
	if log, err := walfile.Read(bytes.NewReader(c.wal), int64(len(c.wal))); err != nil || log.Pages[1] != int64(page) {
		t.Fatalf("resealed log: %v, page 1 at %v, want %d", err, log, page)
	}
	l, err := Open(writeCrashFiles(t, c), Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err == nil {
		l.Close()
	}
	wantClass(t, err, ErrInvalidInput)
}
