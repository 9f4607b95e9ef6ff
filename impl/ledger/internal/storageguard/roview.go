package storageguard

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/ledgererr"
	"github.com/stateguard/stateguard/internal/storage/walfile"
)

// View is what a read-only ledger reads (spec 12.3): the database file
// through the descriptor the storage guard holds, with the pages of the
// committed frames of its -wal laid over it (read through a descriptor of
// its own) and the file format bytes 18-19 presented as 1, so SQLite reads
// it as a rollback-mode database and needs no WAL index. That is the
// database the next writer sees once SQLite has recovered the -wal. Nothing
// is copied: pages are read when SQLite asks for them.
type View struct {
	g *Guard

	wal      *os.File     // nil without a -wal
	log      *walfile.Log // the committed part of the -wal
	pageSize int64
	size     int64 // the database's size as presented
	physSize int64 // the database file's size at the start

	// What the files looked like when the view was made, compared again
	// after every read (unchanged).
	db         FileInfo
	walInfo    FileInfo
	walPresent bool
	shmPresent bool
	shmIdent   fileIdent

	// Locks held while a read runs (Linux; see rolock_*.go).
	dbLocked  bool
	shmLocked bool
	lockedShm fileIdent
}

// The transient states of a read-only read; each is retried.
var (
	ErrSourceChanged = stateConflict("database changed while it was being read")
	ErrJournal       = stateConflict("a rollback journal is present")
)

// ErrNotLedgerFile is a database file that cannot be a ledger at all.
var ErrNotLedgerFile = stateConflict("database file is not a valid ledger")

// ErrHeaderIncomplete is errNotLedgerFile for a header whose file format
// versions are neither rollback (1) nor WAL (2), which a read can see
// while another process writes a new ledger's first page: retried as a
// change (readonly.go), then answered as errNotLedgerFile is.
var ErrHeaderIncomplete = stateConflict("database file is not a valid ledger")

// ErrLogNotLedger is errNotLedgerFile decided by the -wal's own checksummed
// header (an unknown format version, commits in another page size), which
// no writer of this database writes: a writable open refuses on it too,
// before its connection would recover or checkpoint that log (spec 9.5).
var ErrLogNotLedger = fmt.Errorf("%w", ErrNotLedgerFile)

// NewView looks at the files afresh and takes the read locks, waiting
// for them up to busyMS. The caller runs release when the read is over.
func NewView(g *Guard, busyMS int) (*View, error) {
	return NewViewContext(context.Background(), g, busyMS)
}

// NewViewContext is newROView whose wait for the locks also ends with ctx.
func NewViewContext(ctx context.Context, g *Guard, busyMS int) (*View, error) {
	v := &View{g: g}
	if err := v.Lock(ctx, busyMS); err != nil {
		return nil, err
	}
	if err := v.load(); err != nil {
		v.Release()
		v.Close()
		return nil, err
	}
	return v, nil
}

// SidecarState is one lstat of a sidecar: present means it exists with at
// least one link (zero links is SQLite unlinking it right now).
func SidecarState(path string) (present bool, info FileInfo, err error) {
	info, err = Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, FileInfo{}, nil
	}
	if err != nil {
		return false, FileInfo{}, internal("stat sidecar", err)
	}
	return info.nlink > 0, info, nil
}

// Lock takes the read locks that keep writers from changing the database
// file under the view: a shared lock on the database's SHARED range (a
// closing writer then cannot checkpoint and delete its -wal) and, when a
// -shm exists, the -shm's first reader byte (no checkpoint copies pages
// into the database). Both are what an SQLite reader takes; neither writes
// or creates anything. A writer that holds a conflicting lock (a
// checkpoint copying pages, a closing writer deleting its -wal) holds it
// for moments, so the lock is retried, as SQLite's busy handler would,
// for up to busyMS milliseconds; then it is ledgererr.ErrBusy. A ctx that ends
// ends the wait too, as it ends a writer's busy wait. On an error no lock
// is left held.
func (v *View) Lock(ctx context.Context, busyMS int) error {
	waited := time.Duration(0)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err := v.tryLock()
		if err == nil {
			return nil
		}
		v.Release()
		if !errors.Is(err, ledgererr.ErrBusy) || waited >= time.Duration(busyMS)*time.Millisecond {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return ledgererr.Cancelled(cerr)
		}
		Hooks.LockPause(pause)
		waited += pause
	}
}

func (v *View) tryLock() error {
	if !Hooks.ReadLocks {
		return nil
	}
	h := v.g.held
	if err := h.lockDatabaseShared(); err != nil {
		return err
	}
	v.dbLocked = true
	present, info, err := SidecarState(v.g.path + "-shm")
	if err != nil || !present {
		return err
	}
	if err := checkSidecarShape(info); err != nil {
		return err
	}
	ok, err := h.lockShm(v.g.path+"-shm", info.ident)
	if err != nil || !ok {
		return err
	}
	v.shmLocked, v.lockedShm = true, info.ident
	return nil
}

// Release drops the read locks; the view stays usable for a later check.
func (v *View) Release() {
	if v.shmLocked {
		v.g.held.unlockShm(v.lockedShm)
		v.shmLocked = false
	}
	if v.dbLocked {
		v.g.held.unlockDatabaseShared()
		v.dbLocked = false
	}
}

// Close releases the view's own -wal descriptor (no SQLite lock lives on
// a -wal file).
func (v *View) Close() {
	if v.wal != nil {
		v.wal.Close()
		v.wal = nil
	}
}

// checkSidecarShape applies the read-only sidecar rules of 11.2 to one
// Lstat.
func checkSidecarShape(info FileInfo) error {
	if info.isLink || !info.isReg {
		return invalidInput("sidecar is not a regular file")
	}
	if info.nlink > 1 {
		return invalidInput("sidecar has more than one link")
	}
	if PosixModes && info.perm&0o077 != 0 {
		return invalidInput("sidecar mode is not private")
	}
	return nil
}

// load records the files' state and reads the -wal's committed frames.
func (v *View) load() error {
	g := v.g
	info, err := Lstat(g.path)
	if err != nil {
		return stateConflict("database file disappeared")
	}
	if err := checkDBShape(info); err != nil {
		return err
	}
	if info.ident != g.ident {
		return stateConflict("database file was replaced")
	}
	if present, _, err := SidecarState(g.path + "-journal"); err != nil || present {
		if err == nil {
			err = ErrJournal
		}
		return err
	}
	if v.shmPresent, info, err = SidecarState(g.path + "-shm"); err != nil {
		return err
	}
	v.shmIdent = info.ident
	if v.db, err = fstat(g.held.f); err != nil {
		return internal("stat database", err)
	}
	v.physSize = v.db.size

	var hdr [100]byte
	n, err := g.held.f.ReadAt(hdr[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return internal("read database header", err)
	}
	if n < len(hdr) || string(hdr[:16]) != "SQLite format 3\x00" {
		return ErrNotLedgerFile
	}
	if hdr[18] == 1 && hdr[19] == 1 {
		return invalidInput("database is not in WAL mode")
	}
	if hdr[18] != 2 || hdr[19] != 2 {
		// No file format SQLite writes (1 or 2): a first page another
		// process is writing as the read sees it (a ledger being
		// created), or damage. Retried; a state that lasts is a file
		// that is no ledger (yet).
		return ErrHeaderIncomplete
	}
	v.pageSize = int64(binary.BigEndian.Uint16(hdr[16:]))
	if v.pageSize == 1 {
		v.pageSize = 65536
	}
	if v.pageSize < 512 || v.pageSize&(v.pageSize-1) != 0 {
		return ErrNotLedgerFile
	}
	v.size = v.physSize

	present, info, err := SidecarState(g.path + "-wal")
	if err != nil || !present {
		return err
	}
	if err := checkSidecarShape(info); err != nil {
		return err
	}
	f, err := OpenNoFollow(g.path + "-wal")
	if err != nil {
		// Gone, or held by a writer's SQLite deleting it (Windows): the
		// files are changing, so the attempt is retried.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errInUse) {
			return ErrSourceChanged
		}
		return invalidInput("sidecar cannot be opened safely")
	}
	v.wal = f
	if v.walInfo, err = fstat(f); err != nil {
		return internal("stat sidecar", err)
	}
	if v.walInfo.ident != info.ident {
		return ErrSourceChanged
	}
	v.walPresent = true
	if Hooks.ViewLoading != nil {
		Hooks.ViewLoading(g.path)
	}
	if v.log, err = walfile.Read(f, v.walInfo.size); err != nil {
		if errors.Is(err, walfile.ErrVersion) {
			return ErrLogNotLedger
		}
		return v.walReadFailed(err)
	}
	if v.log.DBPages == 0 {
		return nil
	}
	if int64(v.log.PageSize) != v.pageSize {
		return ErrLogNotLedger
	}
	v.size = int64(v.log.DBPages) * v.pageSize
	if err := v.checkHeaderWAL(); err != nil {
		return err
	}
	return nil
}

// walReadFailed classes a failed read of the -wal while a view is made: a
// writer may truncate a checkpointed -wal at any moment (no read lock holds
// that off), and a -wal shorter than its stat said is a change to retry.
func (v *View) walReadFailed(err error) error {
	if st, serr := fstat(v.wal); serr == nil && st.size < v.walInfo.size {
		return ErrSourceChanged
	}
	return internal("read sidecar", err)
}

// checkHeaderWAL requires the presented page 1, which may come from the
// -wal, to say WAL mode as well.
func (v *View) checkHeaderWAL() error {
	off, ok := v.log.Pages[1]
	if !ok {
		return nil
	}
	var b [2]byte
	if _, err := v.wal.ReadAt(b[:], off+18); err != nil {
		return v.walReadFailed(err)
	}
	if b[0] != 2 || b[1] != 2 {
		return invalidInput("database is not in WAL mode")
	}
	return nil
}

// Unchanged reports whether the files are still what the view was made
// from. strict is the test before a view is used again: any change at all
// makes a new view worth it. Otherwise it is the test after a read: with
// the -shm lock held no checkpoint can have run, so frames appended to the
// -wal after the view's last commit cannot have reached anything the view
// read, and growth of the -wal is allowed. A database path that names
// another file now is not retried: the guard holds the old one.
func (v *View) Unchanged(strict bool) error {
	g := v.g
	info, err := Lstat(g.path)
	if err != nil {
		return stateConflict("database file disappeared")
	}
	if info.ident != g.ident {
		return stateConflict("database file was replaced")
	}
	db, err := fstat(g.held.f)
	if err != nil {
		return internal("stat database", err)
	}
	if db.size != v.db.size || db.modTime != v.db.modTime || db.chTime != v.db.chTime {
		return ErrSourceChanged
	}
	if present, _, err := SidecarState(g.path + "-journal"); err != nil || present {
		return errOr(err, ErrSourceChanged)
	}
	present, shm, err := SidecarState(g.path + "-shm")
	if err != nil || present != v.shmPresent || (present && shm.ident != v.shmIdent) {
		return errOr(err, ErrSourceChanged)
	}
	present, walPath, err := SidecarState(g.path + "-wal")
	if err != nil || present != v.walPresent {
		return errOr(err, ErrSourceChanged)
	}
	if !present {
		return nil
	}
	if walPath.ident != v.walInfo.ident {
		return ErrSourceChanged
	}
	wal, err := fstat(v.wal)
	if err != nil {
		return internal("stat sidecar", err)
	}
	checkpointsHeld := v.shmLocked && v.shmPresent && v.lockedShm == v.shmIdent
	// A -wal shorter than its header held no frame the view used, so a
	// writer that starts a log there (0 -> header and frames) changes
	// nothing the view read either.
	grewOnly := !strict && checkpointsHeld && wal.size >= v.walInfo.size
	if !grewOnly && (wal.size != v.walInfo.size || wal.modTime != v.walInfo.modTime || wal.chTime != v.walInfo.chTime) {
		return ErrSourceChanged
	}
	if v.walInfo.size >= walfile.HeaderSize {
		var hdr [walfile.HeaderSize]byte
		if _, err := v.wal.ReadAt(hdr[:], 0); err != nil {
			return v.walReadFailed(err)
		}
		if hdr != v.log.Header {
			return ErrSourceChanged
		}
	}
	return nil
}

func errOr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// ReadAt serves the presented database: page by page from the -wal's
// committed frames or from the database file (zeros past its end, as
// SQLite reads them), with bytes 18-19 reading as 1.
func (v *View) ReadAt(p []byte, off int64) (int, error) {
	if off >= v.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if rest := v.size - off; n > rest {
		n = rest
	}
	for done := int64(0); done < n; {
		pos := off + done
		in := pos % v.pageSize
		k := v.pageSize - in
		if k > n-done {
			k = n - done
		}
		dst := p[done : done+k]
		if v.log != nil && v.log.DBPages != 0 {
			if woff, ok := v.log.Pages[uint32(pos/v.pageSize+1)]; ok {
				if _, err := readFullAt(v.wal, dst, woff+in); err != nil {
					return int(done), err
				}
				done += k
				continue
			}
		}
		have := int64(0)
		if pos < v.physSize {
			have = min(k, v.physSize-pos)
			if _, err := readFullAt(v.g.held.f, dst[:have], pos); err != nil {
				return int(done), err
			}
		}
		clear(dst[have:])
		done += k
	}
	for _, b := range []int64{18, 19} {
		if off <= b && b < off+n {
			p[b-off] = 1
		}
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

func readFullAt(f *os.File, b []byte, off int64) (int, error) {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return n, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// ViewFS is the fs.FS the read-only VFS serves: one file, the view.
type ViewFS struct{ v *View }

// ViewFileName is the name the read-only connection opens.
const ViewFileName = "ledger"

func (r ViewFS) Open(name string) (fs.File, error) {
	if name != ViewFileName {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &roFile{v: r.v}, nil
}

// roFile is SQLite's handle on the view; the VFS seeks, then reads.
type roFile struct {
	v   *View
	off int64
}

func (f *roFile) Read(p []byte) (int, error) {
	n, err := f.v.ReadAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *roFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += f.off
	case io.SeekEnd:
		off += f.v.size
	}
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	f.off = off
	return off, nil
}

func (f *roFile) Stat() (fs.FileInfo, error) { return roInfo{size: f.v.size}, nil }
func (f *roFile) Close() error               { return nil }

type roInfo struct{ size int64 }

func (i roInfo) Name() string       { return ViewFileName }
func (i roInfo) Size() int64        { return i.size }
func (i roInfo) Mode() fs.FileMode  { return 0o400 }
func (i roInfo) ModTime() time.Time { return time.Time{} }
func (i roInfo) IsDir() bool        { return false }
func (i roInfo) Sys() any           { return nil }
