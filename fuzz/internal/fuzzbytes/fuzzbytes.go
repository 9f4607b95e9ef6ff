// Package fuzzbytes turns a fuzzer's byte string into a stream of choices,
// so that a fuzz target can decode any input into a sequence of operations.
// An exhausted stream answers zero for ever: every input decodes to
// something, and the fuzzer's mutations map to nearby choices.
package fuzzbytes

// Stream hands out the bytes of a fuzz input as choices.
type Stream struct{ b []byte }

// New reads choices from b.
func New(b []byte) *Stream { return &Stream{b} }

// Done reports whether every byte has been used.
func (s *Stream) Done() bool { return len(s.b) == 0 }

// Byte takes one byte (0 once exhausted).
func (s *Stream) Byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

// Intn takes a choice in [0, n).
func (s *Stream) Intn(n int) int { return int(s.Byte()) % n }

// Bool takes a yes or no.
func (s *Stream) Bool() bool { return s.Byte()&1 == 1 }

// Pick takes one element of list.
func Pick[T any](s *Stream, list []T) T { return list[s.Intn(len(list))] }

// Text takes a length byte (below max) and that many raw bytes: any text,
// valid UTF-8 or not.
func (s *Stream) Text(max int) string {
	n := s.Intn(max)
	if n > len(s.b) {
		n = len(s.b)
	}
	t := string(s.b[:n])
	s.b = s.b[n:]
	return t
}
