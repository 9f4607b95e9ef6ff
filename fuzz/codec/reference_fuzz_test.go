package codec

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/fuzzbytes"
	"github.com/stateguard/stateguard/internal/testsupport/refcheck"
	"github.com/stateguard/stateguard/model/value"
)

// FuzzReferenceWriter: for any document the input decodes to, the bytes the
// reference (Python) writer would produce read back in this codec to the
// document the reference reader gives, and a write of this codec on top
// reads back to it in both readings (internal/testsupport/refcheck).
func FuzzReferenceWriter(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x00y\x03\x01\x00\x02\x06\x03\x03\x00\x01\x02"))
	f.Add([]byte("\x03\x02\x01\x00\x00\x04\x02\x07\x02\x03\x00\x03\x01\x03\x02"))
	f.Fuzz(runOne)
}

func runOne(t *testing.T, data []byte) {
	{
		s := fuzzbytes.New(data)
		doc := value.NewMap()
		doc.Set("schema_version", big.NewInt(1))
		for i := 0; i < 4 && !s.Done(); i++ {
			doc.Set(fuzzKey(s), fuzzValue(s, 4))
		}
		if err := refcheck.Check(doc); err != nil {
			t.Fatal(err)
		}
	}
}

var fuzzWords = []string{
	"y", "Y", "yes", "No", "NO", "n", "True", "false", "on", "Off", "OFF", "null", "Null", "NULL",
	"nan", "inf", "NaN", "Infinity", "items", "sources", "lease", "last_run", "counts", "status", "a.b-c_9",
}

// fuzzKey draws a word of the list or any text (made valid UTF-8; a D4 key,
// which the reference cannot read back, is kept out).
func fuzzKey(s *fuzzbytes.Stream) string {
	if s.Bool() {
		return fuzzbytes.Pick(s, fuzzWords)
	}
	k := strings.ToValidUTF8(s.Text(12), "\ufffd")
	if strings.HasSuffix(k, "\n") {
		k += "x"
	}
	return k
}

var fuzzFloats = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e16, 1e-5, 0.1, 2.5, 5e-324, 1e308}

func fuzzValue(s *fuzzbytes.Stream, depth int) value.Value {
	kinds := 6
	if depth > 0 {
		kinds = 8
	}
	switch s.Intn(kinds) {
	case 0:
		return nil
	case 1:
		return s.Bool()
	case 2:
		n := new(big.Int).SetBytes([]byte(s.Text(24)))
		if s.Bool() {
			n.Neg(n)
		}
		return n
	case 3:
		return fuzzbytes.Pick(s, fuzzFloats)
	case 4, 5:
		return strings.ToValidUTF8(s.Text(16), "\ufffd")
	case 6:
		out := make([]value.Value, s.Intn(4))
		for i := range out {
			out[i] = fuzzValue(s, depth-1)
		}
		return out
	}
	m := value.NewMap()
	for range s.Intn(4) {
		m.Set(fuzzKey(s), fuzzValue(s, depth-1))
	}
	return m
}
