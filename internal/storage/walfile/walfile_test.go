package walfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// logWriter builds a log the way SQLite writes one, for tests: the
// checksum words in the byte order the magic's low bit names.
type logWriter struct {
	buf      bytes.Buffer
	order    binary.ByteOrder
	pageSize int
	s0, s1   uint32
	salts    [8]byte
}

func newLog(bigEndian bool, pageSize int, version uint32) *logWriter {
	w := &logWriter{order: binary.LittleEndian, pageSize: pageSize, salts: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}
	m := uint32(magic)
	if bigEndian {
		m |= 1
		w.order = binary.BigEndian
	}
	h := make([]byte, HeaderSize)
	binary.BigEndian.PutUint32(h[0:], m)
	binary.BigEndian.PutUint32(h[4:], version)
	binary.BigEndian.PutUint32(h[8:], uint32(pageSize))
	binary.BigEndian.PutUint32(h[12:], 9)
	copy(h[16:], w.salts[:])
	w.sum(h[:24])
	binary.BigEndian.PutUint32(h[24:], w.s0)
	binary.BigEndian.PutUint32(h[28:], w.s1)
	w.buf.Write(h)
	return w
}

// sum is the test's own reading of SQLite's checksum.
func (w *logWriter) sum(b []byte) {
	for i := 0; i < len(b); i += 8 {
		w.s0 += w.order.Uint32(b[i:]) + w.s1
		w.s1 += w.order.Uint32(b[i+4:]) + w.s0
	}
}

func (w *logWriter) frame(pgno, commit uint32, fill byte) {
	h := make([]byte, FrameHeaderSize)
	binary.BigEndian.PutUint32(h[0:], pgno)
	binary.BigEndian.PutUint32(h[4:], commit)
	copy(h[8:], w.salts[:])
	page := bytes.Repeat([]byte{fill}, w.pageSize)
	w.sum(h[:8])
	w.sum(page)
	binary.BigEndian.PutUint32(h[16:], w.s0)
	binary.BigEndian.PutUint32(h[20:], w.s1)
	w.buf.Write(h)
	w.buf.Write(page)
}

func read(t *testing.T, b []byte) *Log {
	t.Helper()
	l, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCommittedFramesBothByteOrders: pages of committed transactions are
// found, the newest copy wins, a trailing transaction without its commit
// frame is ignored, in either checksum byte order.
func TestCommittedFramesBothByteOrders(t *testing.T) {
	for _, big := range []bool{false, true} {
		w := newLog(big, 512, formatVersion)
		w.frame(2, 0, 'a')
		w.frame(1, 3, 'b') // commit: 3 pages
		w.frame(2, 4, 'c') // commit: page 2 again, 4 pages
		w.frame(5, 0, 'd') // never committed
		l := read(t, w.buf.Bytes())
		frame := int64(FrameHeaderSize + 512)
		if l.PageSize != 512 || l.DBPages != 4 || l.Frames != 3 || len(l.Pages) != 2 ||
			l.Pages[1] != HeaderSize+frame+FrameHeaderSize || l.Pages[2] != HeaderSize+2*frame+FrameHeaderSize {
			t.Fatalf("big endian %v: %+v", big, l)
		}
		if l.End != HeaderSize+3*frame {
			t.Fatalf("end %d", l.End)
		}
	}
}

// TestInvalidFramesEndTheLog: a frame with other salts, a changed byte or
// page number 0 ends the log there; a bad header holds nothing; a header
// of another version is ErrVersion.
func TestInvalidFramesEndTheLog(t *testing.T) {
	w := newLog(false, 512, formatVersion)
	w.frame(1, 1, 'a')
	w.frame(1, 2, 'b')
	good := w.buf.Bytes()
	frame := FrameHeaderSize + 512
	second := HeaderSize + frame
	for name, at := range map[string]int{"salt": second + 9, "page byte": second + FrameHeaderSize + 7, "commit field": second + 5} {
		b := append([]byte(nil), good...)
		b[at] ^= 1
		if l := read(t, b); l.DBPages != 1 || l.Frames != 1 {
			t.Fatalf("%s: %+v", name, l)
		}
	}
	zero := newLog(false, 512, formatVersion)
	zero.frame(0, 1, 'a')
	if l := read(t, zero.buf.Bytes()); l.DBPages != 0 {
		t.Fatalf("page 0: %+v", l)
	}
	for name, at := range map[string]int{"magic": 3, "header checksum": 25, "page size": 10} {
		b := append([]byte(nil), good...)
		b[at] ^= 1
		if l := read(t, b); l.DBPages != 0 || l.PageSize != 0 {
			t.Fatalf("%s: %+v", name, l)
		}
	}
	if l := read(t, good[:HeaderSize-1]); l.DBPages != 0 {
		t.Fatalf("short: %+v", l)
	}
	other := newLog(false, 512, formatVersion+1)
	other.frame(1, 1, 'a')
	if _, err := Read(bytes.NewReader(other.buf.Bytes()), int64(other.buf.Len())); !errors.Is(err, ErrVersion) {
		t.Fatalf("version: %v", err)
	}
}

// TestHeaderOnlyShortAndLargestPages: a log that is only its header (as a
// checkpoint that restarted the log leaves it) names its page size and
// holds no frame; a log shorter than a header holds nothing but keeps the
// bytes it has as its header (the read-only view compares headers to see
// a log change), whether the reader ends with io.EOF or not; pages of
// 65536 bytes, the largest SQLite makes, are read.
func TestHeaderOnlyShortAndLargestPages(t *testing.T) {
	w := newLog(false, 4096, formatVersion)
	if l := read(t, w.buf.Bytes()); l.PageSize != 4096 || l.Frames != 0 || l.End != 0 || !bytes.Equal(l.Header[:], w.buf.Bytes()) {
		t.Fatalf("header only: %+v", l)
	}
	short := w.buf.Bytes()[:10]
	for name, r := range map[string]io.ReaderAt{"plain": bytes.NewReader(short), "EOF at the end": eofAtEnd(short)} {
		l, err := Read(r, int64(len(short)))
		if err != nil || l.PageSize != 0 || !bytes.Equal(l.Header[:10], short) || l.Header[10] != 0 {
			t.Fatalf("short log, %s reader: %+v %v", name, l, err)
		}
	}
	big := newLog(true, 65536, formatVersion)
	big.frame(1, 1, 'z')
	if l := read(t, big.buf.Bytes()); l.PageSize != 65536 || l.Frames != 1 || l.Pages[1] != HeaderSize+FrameHeaderSize {
		t.Fatalf("64 KiB pages: %+v", l)
	}
}

// eofAtEnd is a reader that answers io.EOF with the last bytes, as
// io.ReaderAt allows.
type eofAtEnd []byte

func (b eofAtEnd) ReadAt(p []byte, off int64) (int, error) {
	n, err := bytes.NewReader(b).ReadAt(p, off)
	if err == nil && off+int64(n) == int64(len(b)) {
		err = io.EOF
	}
	return n, err
}

// TestReadErrorsPassThrough: a read error other than the end of the log
// comes back as itself, for the caller to class; a log cut short inside
// a frame batch is io.ErrUnexpectedEOF from the reader's io.EOF.
func TestReadErrorsPassThrough(t *testing.T) {
	w := newLog(false, 512, formatVersion)
	w.frame(1, 1, 'a')
	b := w.buf.Bytes()
	broken := errors.New("device gone")
	if _, err := Read(failAfter{b, HeaderSize, broken}, int64(len(b))); !errors.Is(err, broken) {
		t.Fatalf("got %v, want the reader's own error", err)
	}
	if _, err := Read(bytes.NewReader(b[:len(b)-1]), int64(len(b))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
}

// failAfter reads b up to limit and fails with err beyond it.
type failAfter struct {
	b     []byte
	limit int64
	err   error
}

func (f failAfter) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.limit {
		return 0, f.err
	}
	return copy(p, f.b[off:]), nil
}
