package codec

import (
	"bytes"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// plainByte is the byte loop's reading of a byte a JSON string carries as
// it is (printable ASCII but '"' and '\\'), the oracle FuzzPlainScan
// holds the vector loops to.
func plainByte(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }

// FuzzPlainScan: pyjson's scans of plain string bytes, which run sixteen
// bytes a step in SSE2 on amd64 (CopyPlain, and SkipRawASCII and
// RawStringEnd on long runs), answer for any bytes, any start and any
// room as a byte-by-byte loop does: SkipRawASCII's stop, RawStringEnd's
// quote or -1, and CopyPlain's stop, copy and room (nothing written
// outside dst).
func FuzzPlainScan(f *testing.F) {
	f.Add([]byte("The quick brown fox jumps over the lazy dog, 0123456789!\"\n"), uint8(0), uint8(64))
	f.Add([]byte("0123456789abcdef0123456789abcdef\x7f0123456789abcdef"), uint8(1), uint8(40))
	f.Add([]byte("caf\xc3\xa9 \\\" \x00 \x1f \x20 \x7e \x80 \xff"), uint8(0), uint8(16))
	f.Fuzz(func(t *testing.T, data []byte, from, room uint8) {
		s := string(data)
		i := min(int(from), len(s))
		stop := i
		for stop < len(s) && plainByte(s[stop]) {
			stop++
		}
		if got := pyjson.SkipRawASCII(s, i); got != stop {
			t.Fatalf("SkipRawASCII(%q, %d) = %d; want %d", s, i, got, stop)
		}
		quote := -1
		if stop < len(s) && s[stop] == '"' {
			quote = stop
		}
		if got := pyjson.RawStringEnd(s, i); got != quote {
			t.Fatalf("RawStringEnd(%q, %d) = %d; want %d", s, i, got, quote)
		}
		// CopyPlain from i into a dst of room bytes inside a larger
		// buffer: the blocks of sixteen both hold, up to the one with
		// the stop.
		buf := bytes.Repeat([]byte{0xee}, int(room)+32)
		dst := buf[16 : 16+int(room) : 16+int(room)]
		rest := s[i:]
		whole := min(len(rest), len(dst)) / 16 * 16
		wantN, wantStopped, copied := whole, false, whole
		if j := stop - i; j < whole {
			wantN, wantStopped, copied = j, true, (j/16+1)*16
		}
		n, stopped := pyjson.CopyPlain(dst, rest)
		if n != wantN || stopped != wantStopped {
			t.Fatalf("CopyPlain(%d bytes, %q) = %d, %v; want %d, %v", room, rest, n, stopped, wantN, wantStopped)
		}
		if !bytes.Equal(dst[:copied], []byte(rest[:copied])) {
			t.Fatalf("CopyPlain(%d bytes, %q) copied %q", room, rest, dst[:copied])
		}
		for k, c := range buf {
			if (k < 16 || k >= 16+int(room)) && c != 0xee {
				t.Fatalf("CopyPlain(%d bytes, %q) wrote outside dst, at %d", room, rest, k-16)
			}
		}
	})
}
