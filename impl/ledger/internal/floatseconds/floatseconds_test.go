package floatseconds

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// decimalSeconds writes n nanoseconds as exact decimal seconds, the text
// strconv.ParseFloat rounds correctly: an oracle independent of the
// arithmetic under test.
func decimalSeconds(n *big.Int) string {
	sign := ""
	if n.Sign() < 0 {
		sign, n = "-", new(big.Int).Neg(n)
	}
	digits := n.String()
	if len(digits) <= 9 {
		digits = strings.Repeat("0", 10-len(digits)) + digits
	}
	return sign + digits[:len(digits)-9] + "." + digits[len(digits)-9:]
}

func parse(t interface{ Fatal(...any) }, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// nearestNanosOracle rounds x's exact decimal expansion (every float has
// a finite one, at most 1074 fractional digits) to nine fractional digits,
// ties to even, by hand on the text.
func nearestNanosOracle(x float64) *big.Int {
	s := strconv.FormatFloat(math.Abs(x), 'f', 1100, 64)
	dot := strings.IndexByte(s, '.')
	kept, rest := s[:dot]+s[dot+1:dot+10], strings.TrimRight(s[dot+10:], "0")
	n, _ := new(big.Int).SetString(kept, 10)
	up := false
	switch {
	case rest == "":
	case rest[0] > '5', rest[0] == '5' && len(rest) > 1:
		up = true
	case rest[0] == '5':
		up = n.Bit(0) == 1
	}
	if up {
		n.Add(n, big.NewInt(1))
	}
	if x < 0 {
		n.Neg(n)
	}
	return n
}

// Seconds(d) is the float strconv reads from d's exact decimal text, for
// every Duration; the largest ones lose bits twice when converted through
// float64(d) first.
func TestSecondsOfADurationRoundsOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64().Draw(t, "ns"))
		want := parse(t, decimalSeconds(big.NewInt(int64(d))))
		if got := Seconds(d); got != want {
			t.Fatalf("Seconds(%d ns) = %v, want %v", int64(d), got, want)
		}
	})
	// Found by a search: the first three land one float off through
	// float64(d)/1e9, the others through Duration.Seconds.
	for _, d := range doubleRoundingCases {
		want := parse(t, decimalSeconds(big.NewInt(int64(d))))
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%d ns) = %v, want %v", int64(d), got, want)
		}
	}
}

var doubleRoundingCases = []time.Duration{5577006791947779410, 3916589616287113937, 6334824724549167320, 1768507280, 1680280718, 36598598956}

// UnixSeconds(t) is the float strconv reads from t's exact decimal Unix
// seconds.
func TestUnixSecondsRoundsOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sec := rapid.Int64Range(-1<<40, 1<<40).Draw(t, "sec")
		nsec := rapid.Int64Range(0, nanosPerSecond-1).Draw(t, "nsec")
		tm := time.Unix(sec, nsec)
		n := new(big.Int).Mul(big.NewInt(sec), big.NewInt(nanosPerSecond))
		n.Add(n, big.NewInt(nsec))
		want := parse(t, decimalSeconds(n))
		if got := UnixSeconds(tm); got != want {
			t.Fatalf("UnixSeconds(%d s %d ns) = %v, want %v", sec, nsec, got, want)
		}
	})
}

// Time and Duration take a float to the nearest nanosecond, as the
// float's exact decimal expansion rounded at the ninth digit says.
func TestFloatToNanosecondsRoundsToNearest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := drawSeconds(t)
		want := nearestNanosOracle(x)
		if d, ok := Duration(x); ok != want.IsInt64() || ok && int64(d) != want.Int64() {
			t.Fatalf("Duration(%v) = %d, %v; want %v ns", x, int64(d), ok, want)
		}
		tm, ok := Time(x)
		if !ok {
			t.Fatalf("Time(%v) refused", x)
		}
		got := new(big.Int).Mul(big.NewInt(tm.Unix()), big.NewInt(nanosPerSecond))
		got.Add(got, big.NewInt(int64(tm.Nanosecond())))
		if got.Cmp(want) != 0 {
			t.Fatalf("Time(%v) = %v ns, want %v ns", x, got, want)
		}
	})
	for x, want := range map[float64]int64{0.5e-9: 0, 1.5e-9: 2, 2.5e-9: 2, -0.5e-9: 0, 1e-10: 0} {
		// The decimal constants are not exact floats: check the oracle
		// agrees before using it.
		if d, ok := Duration(x); !ok || int64(d) != nearestNanosOracle(x).Int64() {
			t.Errorf("Duration(%v) = %d, %v; oracle %v (near %d)", x, int64(d), ok, nearestNanosOracle(x), want)
		}
	}
}

// The int64 path (smallNanos, every float below about 292 years) rounds
// as the exact one: drawn by bits within its exponents, so that floats
// finer than a nanosecond, ties and the int64 limit all come up.
func TestSmallFloatsRoundToNearest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		exp := rapid.IntRange(1023-140, 1023+34).Draw(t, "exponent")
		frac := rapid.Uint64Range(0, 1<<52-1).Draw(t, "fraction")
		x := math.Float64frombits(uint64(exp)<<52 | frac)
		if rapid.Bool().Draw(t, "negative") {
			x = -x
		}
		want := nearestNanosOracle(x)
		n, ok := smallNanos(x)
		if ok != want.IsInt64() || ok && n != want.Int64() {
			t.Fatalf("smallNanos(%v) = %d, %v; want %v", x, n, ok, want)
		}
	})
	for _, x := range []float64{0, math.Copysign(0, -1), 1.0 / 1024, 3.0 / 1024, -5.0 / 1024, 0.5e-9, 1.5e-9, 2.5e-9, -2.5e-9, 5e-324, 9223372036.854775, 9223372036.854775808, 1304066831.170625356} {
		want := nearestNanosOracle(x)
		if n, ok := smallNanos(x); ok != want.IsInt64() || ok && n != want.Int64() {
			t.Errorf("smallNanos(%v) = %d, %v; want %v", x, n, ok, want)
		}
	}
}

// drawSeconds draws floats of every magnitude a ledger stores, by their
// bits, within ±2^62 seconds.
func drawSeconds(t *rapid.T) float64 {
	for {
		x := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
		if !math.IsNaN(x) && math.Abs(x) <= 1<<62 {
			return x
		}
	}
}

// Every float of magnitude 2^23 s or more comes back from Time and
// Duration unchanged.
func TestLargeFloatsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := drawSeconds(t)
		if math.Abs(x) < 1<<23 {
			x = math.Copysign(math.Abs(x)+1<<23, x)
		}
		tm, ok := Time(x)
		if !ok || UnixSeconds(tm) != x {
			t.Fatalf("Time(%v) = %v, %v; back %v", x, tm, ok, UnixSeconds(tm))
		}
		if d, ok := Duration(x); ok && Seconds(d) != x {
			t.Fatalf("Duration(%v) = %v; back %v", x, d, Seconds(d))
		}
	})
}

// Below 2^23 s a float comes back unchanged when it is nearest to a whole
// number of nanoseconds: every decimal with at most nine fractional
// digits.
func TestDecimalsOfNanosecondsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := big.NewInt(rapid.Int64Range(-(1<<23)*nanosPerSecond, (1<<23)*nanosPerSecond).Draw(t, "ns"))
		x := parse(t, decimalSeconds(n))
		tm, ok := Time(x)
		if !ok || UnixSeconds(tm) != x {
			t.Fatalf("Time(%v) = %v, %v; back %v", x, tm, ok, UnixSeconds(tm))
		}
		if d, ok := Duration(x); !ok || Seconds(d) != x {
			t.Fatalf("Duration(%v) = %v, %v; back %v", x, d, ok, Seconds(d))
		}
	})
}

// The floats that do not come back: detail finer than a nanosecond below
// 2^23 s.
func TestSubNanosecondFloatsDoNotRoundTrip(t *testing.T) {
	for _, x := range []float64{1e-10, math.Nextafter(1000, 2000), math.Nextafter(1_700_000, 0)} {
		tm, _ := Time(x)
		d, _ := Duration(x)
		if UnixSeconds(tm) == x || Seconds(d) == x {
			t.Errorf("%v came back unchanged through %v and %v", x, tm, d)
		}
	}
}

// The limits: what a Duration or the instants' range cannot hold, and
// what is not finite, is refused.
func TestRefusals(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 9223372036.854775808, 1e16, -1e300} {
		if d, ok := Duration(x); ok {
			t.Errorf("Duration(%v) = %v, want refused", x, d)
		}
	}
	if d, ok := Duration(9223372036.854775); !ok || d != 9223372036854774475 {
		t.Errorf("the largest float below a Duration's limit: %d, %v", d, ok)
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), 1 << 63, -1e300} {
		if tm, ok := Time(x); ok {
			t.Errorf("Time(%v) = %v, want refused", x, tm)
		}
	}
	if tm, ok := Time(1 << 62); !ok || tm.Unix() != 1<<62 {
		t.Errorf("Time(2^62) = %v, %v", tm, ok)
	}
}
