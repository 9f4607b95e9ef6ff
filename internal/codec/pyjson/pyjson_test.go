package pyjson_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/model/value"
	"pgregory.net/rapid"
)

func TestEncodePythonFacts(t *testing.T) {
	m := value.NewMap()
	m.Set("b", value.Int(1))
	m.Set("a", []value.Value{nil, true, false})
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	cases := []struct {
		name string
		in   value.Value
		want string
	}{
		{"1e16", 1e16, `1e+16`},
		{"negative zero", math.Copysign(0, -1), `-0.0`},
		{"integral float", 100.0, `100.0`},
		{"DEL escaped", "\u007f", `"\u007f"`},
		{"astral as surrogate pair", "😀", `"\ud83d\ude00"`},
		{"html characters raw", "</>&'", `"</>&'"`},
		{"short escapes", "\"\\\n\r\t\b\f", `"\"\\\n\r\t\b\f"`},
		{"other controls", "\x00\x1f", `"\u0000\u001f"`},
		{"non-ASCII lowercase hex", "é\u2028\uffff", `"\u00e9\u2028\uffff"`},
		{"invalid UTF-8 byte", "a\xffb", `"a\ufffdb"`},
		{"map in insertion order", m, `{"b": 1, "a": [null, true, false]}`},
		{"empty containers", []value.Value{value.NewMap(), []value.Value{}}, `[{}, []]`},
		{"big integer", huge, `-123456789012345678901234567890`},
	}
	for _, c := range cases {
		if got := string(pyjson.Encode(c.in)); got != c.want {
			t.Errorf("%s: Encode = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestDecodeFacts(t *testing.T) {
	v, err := pyjson.Decode(" \t\n\r{\"k\": 1, \"j\": 2, \"k\": 3}\r\n")
	if err != nil {
		t.Fatal(err)
	}
	m := v.(*value.Map)
	if got := strings.Join(m.Keys(), ","); got != "k,j" {
		t.Errorf("duplicate key: keys %s, want k,j (first position kept)", got)
	}
	if x, _ := m.Get("k"); x.(*big.Int).Int64() != 3 {
		t.Errorf("duplicate key: value %v, want 3 (last wins)", x)
	}
	if v, _ := pyjson.Decode("1.0"); v != 1.0 {
		t.Errorf("1.0 decodes to %T %v, want float64", v, v)
	}
	if v, _ := pyjson.Decode("10"); v.(*big.Int).Int64() != 10 {
		t.Errorf("10 decodes to %T %v, want *big.Int", v, v)
	}
	if _, err := pyjson.Decode(strings.Repeat("9", pyjson.MaxIntDigits)); err != nil {
		t.Errorf("integer of MaxIntDigits digits refused: %v", err)
	}
	if _, err := pyjson.Decode("-" + strings.Repeat("9", pyjson.MaxIntDigits+1)); !errors.Is(err, pyjson.ErrSyntax) {
		t.Errorf("integer over MaxIntDigits: %v, want ErrSyntax", err)
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if _, err := pyjson.Decode(deep(pyjson.MaxDepth)); err != nil {
		t.Errorf("MaxDepth nesting refused: %v", err)
	}
	if _, err := pyjson.Decode(deep(pyjson.MaxDepth + 1)); !errors.Is(err, pyjson.ErrSyntax) {
		t.Errorf("nesting over MaxDepth: %v, want ErrSyntax", err)
	}
	if _, err := pyjson.Decode("\"a\xffb\""); !errors.Is(err, pyjson.ErrSyntax) {
		t.Errorf("invalid UTF-8: %v, want ErrSyntax", err)
	}
}

// TestDecodeErrorsHideInput: error text names positions only, never input
// values (the CLIs may print errors; inputs may be private).
func TestDecodeErrorsHideInput(t *testing.T) {
	for _, in := range []string{`{"secret-token": x}`, `"secret-token`, `["secret-token" 1]`} {
		_, err := pyjson.Decode(in)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Decode(%q) error %v", in, err)
		}
	}
}

func TestFormatFloatTable(t *testing.T) {
	cases := map[float64]string{
		0: "0.0", 1: "1.0", 0.1: "0.1", 123456789: "123456789.0", 1e16: "1e+16",
		1e15: "1000000000000000.0", 9999999999999998: "9999999999999998.0",
		1e-5: "1e-05", 1e-4: "0.0001", 5e-324: "5e-324",
		1.7976931348623157e308: "1.7976931348623157e+308", 1e22: "1e+22",
		12345678901234567: "1.2345678901234568e+16", 1234567890123456.7: "1234567890123456.8",
		0.30000000000000004: "0.30000000000000004", 2.5e-8: "2.5e-08", -1.5e300: "-1.5e+300",
		1e100: "1e+100", 0.00012: "0.00012",
	}
	for f, want := range cases {
		if got := pyjson.FormatFloat(f); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", f, got, want)
		}
	}
	if got := pyjson.FormatFloat(math.Copysign(0, -1)); got != "-0.0" {
		t.Errorf("FormatFloat(-0) = %q", got)
	}
}

// TestFormatFloatProperties characterises repr without a reference: the text
// parses back to the same bits, always shows '.' or 'e', uses the exponent
// form exactly when the decimal exponent is below -4 or at least 16, and its
// digits are the shortest Go finds.
func TestFormatFloatProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var f float64
		if rapid.Bool().Draw(t, "fromBits") {
			f = math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
		} else {
			f = rapid.Float64().Draw(t, "f")
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			t.Skip("not a value")
		}
		s := pyjson.FormatFloat(f)
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(f) {
			t.Fatalf("%q does not round-trip to %v", s, f)
		}
		if !strings.ContainsAny(s, ".e") {
			t.Fatalf("%q has neither '.' nor 'e'", s)
		}
		g := strconv.FormatFloat(f, 'e', -1, 64)
		exp, _ := strconv.Atoi(g[strings.IndexByte(g, 'e')+1:])
		if wantExp := exp < -4 || exp >= 16; strings.Contains(s, "e") != wantExp {
			t.Fatalf("%q: exponent form %v, decimal exponent %d", s, !wantExp, exp)
		}
		if digits(s) != digits(g) {
			t.Fatalf("%q: digits differ from shortest %q", s, g)
		}
	})
}

// digits returns the significant digits of a float text.
func digits(s string) string {
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		s = s[:i]
	}
	s = strings.NewReplacer("-", "", ".", "").Replace(s)
	s = strings.TrimLeft(s, "0")
	return strings.TrimRight(s, "0")
}

// genValue draws a JSON-like value of bounded depth.
func genValue(t *rapid.T, depth int) value.Value {
	kinds := 6
	if depth > 0 {
		kinds = 8
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		return nil
	case 1:
		return rapid.Bool().Draw(t, "bool")
	case 2:
		n, _ := new(big.Int).SetString(rapid.StringMatching(`-?(0|[1-9][0-9]{0,40})`).Draw(t, "int"), 10)
		return n
	case 3:
		f := math.Float64frombits(rapid.Uint64().Draw(t, "floatbits"))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0.5
		}
		return f
	case 4, 5:
		return rapid.StringOf(rapid.RuneFrom(nil, &unicodeRanges)).Draw(t, "string")
	case 6:
		n := rapid.IntRange(0, 4).Draw(t, "len")
		out := make([]value.Value, n)
		for i := range out {
			out[i] = genValue(t, depth-1)
		}
		return out
	default:
		m := value.NewMap()
		for range rapid.IntRange(0, 4).Draw(t, "len") {
			m.Set(rapid.StringOf(rapid.RuneFrom(nil, &unicodeRanges)).Draw(t, "key"), genValue(t, depth-1))
		}
		return m
	}
}

var unicodeRanges = unicodeTable()

// TestEncodeDecodeRoundTrip: Decode(Encode(v)) gives v back, key order and
// float bits included, and the encoding is pure ASCII.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue(t, 3)
		text := pyjson.Encode(v)
		for _, b := range text {
			if b >= 0x7f || b < 0x20 {
				t.Fatalf("non-ASCII or control byte %#x in %s", b, text)
			}
		}
		var streamed bytes.Buffer
		if err := pyjson.EncodeTo(&streamed, v); err != nil || !bytes.Equal(streamed.Bytes(), text) {
			t.Fatalf("EncodeTo differs from Encode (%v): %s vs %s", err, streamed.Bytes(), text)
		}
		back, err := pyjson.Decode(string(text))
		if err != nil {
			t.Fatalf("Decode(%s): %v", text, err)
		}
		if !value.EqualOrdered(v, back) {
			t.Fatalf("round trip changed the value: %s -> %s", text, pyjson.Encode(back))
		}
	})
}

// TestEncodeToLargeValue: a value many chunks long streams to the same bytes
// as Encode.
func TestEncodeToLargeValue(t *testing.T) {
	m := value.NewMap()
	for i := range 5000 {
		m.Set(fmt.Sprint("key ", i), []value.Value{"caf\u00e9 \U0001F600", value.Int(int64(i)), float64(i) / 4, nil, true})
	}
	want := pyjson.Encode(m)
	var got bytes.Buffer
	if err := pyjson.EncodeTo(&got, m); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("EncodeTo: err %v, %d bytes, want Encode's %d", err, got.Len(), len(want))
	}
}

// TestDecodeStringPrefix: the string reader used for file keys agrees with
// DecodePrefix and refuses what is not a string.
func TestDecodeStringPrefix(t *testing.T) {
	for _, text := range []string{`"plain": 1`, `"esc\u00e9\n": x`, `""`} {
		s, n, err := pyjson.DecodeStringPrefix(text)
		v, m, err2 := pyjson.DecodePrefix(text, 1)
		if err != nil || err2 != nil || s != v || n != m {
			t.Fatalf("%q: (%q, %d, %v) vs DecodePrefix (%v, %d, %v)", text, s, n, err, v, m, err2)
		}
	}
	for _, text := range []string{``, `1`, `"open`, `"bad \x"`} {
		if _, _, err := pyjson.DecodeStringPrefix(text); !errors.Is(err, pyjson.ErrSyntax) {
			t.Fatalf("%q: err %v, want ErrSyntax", text, err)
		}
	}
}

// TestSkipRawASCII: the word-at-a-time scan stops exactly where a byte-wise
// scan does, for every byte value at every position of a word or of the
// tail, from every start, in strings of every length up to 41 bytes, and
// with a second stop just above the first (the bit tricks judge each byte
// alone: no borrow or carry from a stop may flag its neighbour).
func TestSkipRawASCII(t *testing.T) {
	naive := func(s string, i int) int {
		for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\' {
			i++
		}
		return i
	}
	for c := range 256 {
		for pos := range 41 {
			b := []byte(strings.Repeat("abcdefgh", 5) + "a")
			b[pos] = byte(c)
			for n := pos; n <= len(b); n++ {
				s := string(b[:n])
				for from := range n + 1 {
					if got, want := pyjson.SkipRawASCII(s, from), naive(s, from); got != want {
						t.Fatalf("byte %#x at %d of %d, from %d: got %d, want %d", c, pos, n, from, got, want)
					}
				}
			}
		}
	}
	for c := range 256 {
		for _, c2 := range []byte{0, 1, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0xa0, 0xff} {
			for pos := range 16 {
				b := []byte(strings.Repeat("abcdefgh", 3))
				b[pos], b[pos+1] = byte(c), c2
				s := string(b)
				for from := range pos + 3 {
					if got, want := pyjson.SkipRawASCII(s, from), naive(s, from); got != want {
						t.Fatalf("bytes %#x, %#x at %d, from %d: got %d, want %d", c, c2, pos, from, got, want)
					}
				}
			}
		}
	}
}

// TestRawStringEnd: the end RawStringEnd finds is the '"' SkipRawASCII
// stops at, or -1 where it stops at anything else or at the end, for every
// byte value at every position of strings up to 41 bytes long with a '"'
// at every position after it (or none), from every start.
func TestRawStringEnd(t *testing.T) {
	want := func(s string, i int) int {
		if j := pyjson.SkipRawASCII(s, i); j < len(s) && s[j] == '"' {
			return j
		}
		return -1
	}
	for c := range 256 {
		for pos := range 41 {
			for quote := pos; quote <= 41; quote++ {
				b := []byte(strings.Repeat("abcdefgh", 5) + "a")
				b[pos] = byte(c)
				if quote < len(b) {
					b[quote] = '"'
				}
				s := string(b)
				for from := range pos + 1 {
					if got, want := pyjson.RawStringEnd(s, from), want(s, from); got != want {
						t.Fatalf("byte %#x at %d, '\"' at %d, from %d: got %d, want %d", c, pos, quote, from, got, want)
					}
				}
			}
		}
	}
}
