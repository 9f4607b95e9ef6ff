// Package walfile reads an SQLite write-ahead log the way SQLite's own
// recovery does (SQLite's "Database File Format" page, section 4): it finds
// the committed transactions and says, for each database page, where its
// newest committed copy lies in the log. It never writes.
//
// The rules, as the recovery applies them:
//   - The 32-byte header carries a magic number (whose low bit chooses the
//     byte order of the checksums), the format version 3007000, the page
//     size, the checkpoint sequence, two salts and a checksum of the first
//     24 bytes. A bad magic, page size or header checksum means the log
//     holds nothing; an unknown version means SQLite refuses the database.
//   - Frames follow: a 24-byte header (page number, database size in pages
//     after a commit or 0, the two salts, a two-word checksum) and one
//     page. A frame is valid while its salts equal the header's, its page
//     number is not 0 and the running checksum (seeded by the header's,
//     over each frame header's first 8 bytes and its page) equals its own.
//   - The first invalid frame, or the end of the file, ends the log. Only
//     frames up to the last valid frame with a non-zero size field (a
//     commit) count; later ones belong to a transaction that never
//     committed. So a torn tail and frames left over from an earlier
//     generation (other salts) are ignored, never an error.
package walfile

import (
	"encoding/binary"
	"errors"
	"io"
)

const (
	// HeaderSize is the size of the log header.
	HeaderSize = 32
	// FrameHeaderSize is the size of each frame's header.
	FrameHeaderSize = 24

	magic         = 0x377f0682
	formatVersion = 3007000
	maxPageSize   = 65536
)

// ErrVersion is a log whose header is valid but whose format version is
// not the one SQLite writes; SQLite refuses to open the database then.
var ErrVersion = errors.New("walfile: unsupported WAL format version")

// Log is what the committed part of a log says.
type Log struct {
	// Header is the log header as read (meaningful even when the log holds
	// nothing: a reader compares it to notice a rewritten log).
	Header [HeaderSize]byte
	// PageSize is the page size of a valid header, else 0.
	PageSize int
	// DBPages is the database size in pages after the last commit; 0 when
	// the log holds no committed transaction.
	DBPages uint32
	// Pages maps a page number to the file offset of the page data of its
	// newest committed frame.
	Pages map[uint32]int64
	// End is the offset just past the last committed frame (HeaderSize or
	// 0 when there is none).
	End int64
	// Frames is the number of committed frames.
	Frames int
}

// Read reads the log in r, of which the first size bytes are considered.
// Only read errors and ErrVersion are errors.
func Read(r io.ReaderAt, size int64) (*Log, error) {
	l := &Log{Pages: map[uint32]int64{}}
	if size < HeaderSize {
		if size > 0 {
			n, err := r.ReadAt(l.Header[:size], 0)
			if err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
				return nil, err
			}
		}
		return l, nil
	}
	if _, err := readFull(r, l.Header[:], 0); err != nil {
		return nil, err
	}
	h := l.Header[:]
	m := binary.BigEndian.Uint32(h[0:])
	pageSize := binary.BigEndian.Uint32(h[8:])
	if m&^1 != magic || pageSize < 512 || pageSize > maxPageSize || pageSize&(pageSize-1) != 0 {
		return l, nil
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if m&1 == 1 {
		order = binary.BigEndian
	}
	s0, s1 := checksum(order, h[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(h[24:]) || s1 != binary.BigEndian.Uint32(h[28:]) {
		return l, nil
	}
	if binary.BigEndian.Uint32(h[4:]) != formatVersion {
		return nil, ErrVersion
	}
	l.PageSize = int(pageSize)

	frameSize := int64(FrameHeaderSize) + int64(pageSize)
	// Frames are read a batch at a time: a bounded buffer, whatever the
	// log's length. Pages of an uncommitted tail wait in pending until a
	// commit frame makes them count.
	const batchFrames = 64
	buf := make([]byte, frameSize*batchFrames)
	pending := map[uint32]int64{}
	off := int64(HeaderSize)
	frames := 0
	for off+frameSize <= size {
		n := (size - off) / frameSize
		if n > batchFrames {
			n = batchFrames
		}
		chunk := buf[:n*frameSize]
		if _, err := readFull(r, chunk, off); err != nil {
			return nil, err
		}
		for i := int64(0); i < n; i++ {
			f := chunk[i*frameSize : (i+1)*frameSize]
			pgno := binary.BigEndian.Uint32(f[0:])
			if pgno == 0 || string(f[8:16]) != string(h[16:24]) {
				return l, nil
			}
			s0, s1 = checksum(order, f[:8], s0, s1)
			s0, s1 = checksum(order, f[FrameHeaderSize:], s0, s1)
			if s0 != binary.BigEndian.Uint32(f[16:]) || s1 != binary.BigEndian.Uint32(f[20:]) {
				return l, nil
			}
			frames++
			pending[pgno] = off + FrameHeaderSize
			off += frameSize
			if commit := binary.BigEndian.Uint32(f[4:]); commit != 0 {
				for p, o := range pending {
					l.Pages[p] = o
				}
				clear(pending)
				l.DBPages = commit
				l.End = off
				l.Frames = frames
			}
		}
	}
	return l, nil
}

// checksum continues SQLite's WAL checksum (s0, s1) over b, whose length
// is a multiple of 8, reading 32-bit words in the given byte order.
func checksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

func readFull(r io.ReaderAt, b []byte, off int64) (int, error) {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return n, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
