package pyjson

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// copyPlainWant is what CopyPlain must do, read off SkipRawASCII: the
// blocks of sixteen bytes both s and dst hold are copied up to the one
// holding the first stop.
func copyPlainWant(dstLen int, s string) (n int, stopped bool, copied int) {
	whole := min(len(s), dstLen) / 16 * 16
	if j := SkipRawASCII(s, 0); j < whole {
		return j, true, (j/16 + 1) * 16
	}
	return whole, false, whole
}

// checkCopyPlain holds both versions of CopyPlain (the assembly where
// there is one, and the Go one) to copyPlainWant on s, into a dst of
// dstLen bytes.
func checkCopyPlain(t *testing.T, s string, dstLen int) {
	t.Helper()
	n, stopped, copied := copyPlainWant(dstLen, s)
	for _, f := range []struct {
		name string
		copy func([]byte, string) (int, bool)
	}{{"CopyPlain", CopyPlain}, {"copyPlainGo", copyPlainGo}} {
		// dst is a window of a larger buffer, whose bytes around it
		// must stay as they were.
		buf := bytes.Repeat([]byte{0xee}, dstLen+64)
		dst := buf[32 : 32+dstLen : 32+dstLen]
		gotN, gotStopped := f.copy(dst, s)
		if gotN != n || gotStopped != stopped {
			t.Fatalf("%s(%d bytes, %q) = %d, %v; want %d, %v", f.name, dstLen, s, gotN, gotStopped, n, stopped)
		}
		if !bytes.Equal(dst[:copied], []byte(s[:copied])) {
			t.Fatalf("%s(%d bytes, %q) copied %q; want %q", f.name, dstLen, s, dst[:copied], s[:copied])
		}
		for i, c := range buf {
			if (i < 32 || i >= 32+dstLen) && c != 0xee {
				t.Fatalf("%s(%d bytes, %q) wrote outside dst, at %d", f.name, dstLen, s, i-32)
			}
		}
	}
}

// TestCopyPlainEveryByteEverywhere puts each of the 256 byte values at
// each place of a run of printable ASCII, so that every lane of the
// vector compare meets every byte, before and after a first block.
func TestCopyPlainEveryByteEverywhere(t *testing.T) {
	base := []byte("The quick brown fox jumps over the lazy dog, 0123456789!")
	for b := range 256 {
		for i := range 48 {
			s := bytes.Clone(base)
			s[i] = byte(b)
			checkCopyPlain(t, string(s), len(s))
		}
	}
}

// TestCopyPlainLengths tries every length of s and of dst up to 70 bytes,
// plain throughout or with a stop near the end.
func TestCopyPlainLengths(t *testing.T) {
	plain := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ~!#$%&'()"
	for n := range 71 {
		for d := range 71 {
			checkCopyPlain(t, plain[:n], d)
			if n > 0 {
				checkCopyPlain(t, plain[:n-1]+"\"", d)
			}
		}
	}
}

// TestCopyPlainRandom compares them on random text that is mostly plain.
func TestCopyPlainRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkCopyPlain(t, mostlyPlain(r, 200, 150), r.IntN(220))
	}
}

// mostlyPlain is a random text of fewer than n bytes, printable ASCII but
// for one byte in about every (any byte value).
func mostlyPlain(r *rand.Rand, n, every int) string {
	s := make([]byte, r.IntN(n))
	for i := range s {
		s[i] = byte(0x20 + r.IntN(0x5f))
		if r.IntN(every) == 0 {
			s[i] = byte(r.IntN(256))
		}
	}
	return string(s)
}

// checkSkip holds SkipRawASCII (sixteen bytes a step where skipPlain has
// assembly) to skipRawASCIIWords, eight a step, from every start in s.
func checkSkip(t *testing.T, s string) {
	t.Helper()
	for i := range len(s) + 2 {
		if got, want := SkipRawASCII(s, i), skipRawASCIIWords(s, i); got != want {
			t.Fatalf("SkipRawASCII(%q, %d) = %d; want %d", s, i, got, want)
		}
	}
}

// TestSkipRawASCIIEveryByteEverywhere is TestCopyPlainEveryByteEverywhere
// for SkipRawASCII.
func TestSkipRawASCIIEveryByteEverywhere(t *testing.T) {
	base := []byte("The quick brown fox jumps over the lazy dog, 0123456789!")
	for b := range 256 {
		for i := range 48 {
			s := bytes.Clone(base)
			s[i] = byte(b)
			checkSkip(t, string(s))
		}
	}
}

// TestSkipRawASCIIRandom is TestCopyPlainRandom for SkipRawASCII.
func TestSkipRawASCIIRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		checkSkip(t, mostlyPlain(r, 100, 80))
	}
}
