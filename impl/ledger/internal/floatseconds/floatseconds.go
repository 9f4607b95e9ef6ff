// Package floatseconds converts between the ledger's stored form of times
// and spans, float64 seconds (Unix seconds for an instant), and Go's
// time.Time and time.Duration, which count whole nanoseconds.
//
// Both directions round correctly: a float becomes the nearest whole
// nanosecond (ties to even), and a count of nanoseconds becomes the float
// nearest to it (ties to even), computed exactly rather than through an
// intermediate float, whose own rounding could land one float off (double
// rounding).
//
// A float survives the trip to nanoseconds and back exactly when rounding
// it to a whole nanosecond moves it by less than half the gap to its
// neighbouring floats. That holds for every float of magnitude 2^23 s
// (about 97 days) or more within range, whose neighbours are at least
// 2^-29 s (1.86 ns) apart, and for every float nearest to some whole
// number of nanoseconds, which includes every decimal with at most nine
// fractional digits and every clock reading. It fails only below 2^23 s
// for floats carrying detail finer than a nanosecond, such as 1e-10 or
// the float just above 1000.
package floatseconds

import (
	"math"
	"math/big"
	"math/bits"
	"time"
)

const nanosPerSecond = 1_000_000_000

// exactNanos is x seconds in nanoseconds, exactly.
func exactNanos(x float64) *big.Rat {
	r := new(big.Rat).SetFloat64(x)
	return r.Mul(r, big.NewRat(nanosPerSecond, 1))
}

// roundHalfEven rounds r to the nearest integer, ties to even.
func roundHalfEven(r *big.Rat) *big.Int {
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).DivMod(num, den, new(big.Int)) // floor division: 0 <= m < den
	twice := new(big.Int).Lsh(m, 1)
	switch c := twice.Cmp(den); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	return q
}

// smallNanos is x seconds rounded to whole nanoseconds (ties to even)
// when that count fits an int64, found exactly in 128-bit integers; false
// for any other x (not finite, or too large), which nanosOf then takes.
// It is the path of every time and span a ledger holds today, each read
// of a task making six of them.
func smallNanos(x float64) (int64, bool) {
	b := math.Float64bits(x)
	exp, frac := int(b>>52&0x7ff), b&(1<<52-1)
	if exp == 0x7ff {
		return 0, false
	}
	// x = ±m * 2^e exactly.
	m, e := frac|1<<52, exp-1075
	if exp == 0 {
		m, e = frac, -1074
	}
	var q uint64
	switch {
	case e >= 0:
		// 2^52 s or more: beyond an int64 of nanoseconds.
		return 0, false
	case e <= -128:
		// Below 2^-75 s: less than half a nanosecond.
		q = 0
	default:
		// q = round(hi:lo / 2^k), ties to even, of m * 1e9 (below 2^83).
		hi, lo := bits.Mul64(m, nanosPerSecond)
		k := uint(-e)
		var remHi, remLo, halfHi, halfLo uint64
		if k < 64 {
			if hi>>k != 0 {
				return 0, false
			}
			q = lo>>k | hi<<(64-k)
			remLo, halfLo = lo&(1<<k-1), 1<<(k-1)
		} else {
			q = hi >> (k - 64)
			remHi, remLo = hi&(1<<(k-64)-1), lo
			if k == 64 {
				halfLo = 1 << 63
			} else {
				halfHi = 1 << (k - 65)
			}
		}
		above := remHi > halfHi || remHi == halfHi && remLo > halfLo
		tie := remHi == halfHi && remLo == halfLo
		if above || tie && q&1 == 1 {
			q++
		}
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	if b>>63 != 0 {
		return -int64(q), true
	}
	return int64(q), true
}

// nanosOf is x seconds rounded to whole nanoseconds; false when x is not
// finite.
func nanosOf(x float64) (*big.Int, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, false
	}
	if x == math.Trunc(x) && math.Abs(x) < 1<<53/nanosPerSecond {
		return big.NewInt(int64(x) * nanosPerSecond), true
	}
	return roundHalfEven(exactNanos(x)), true
}

// secondsOf is n nanoseconds as the nearest float64 number of seconds.
func secondsOf(n *big.Int) float64 {
	if n.IsInt64() {
		if v := n.Int64(); v >= -1<<53 && v <= 1<<53 {
			// Both operands are exact floats: one IEEE division rounds
			// once, correctly.
			return float64(v) / nanosPerSecond
		}
	}
	num := new(big.Float).SetPrec(uint(n.BitLen()) + 1).SetInt(n)
	q := new(big.Float).SetPrec(53).SetMode(big.ToNearestEven)
	q.Quo(num, new(big.Float).SetInt64(nanosPerSecond))
	f, _ := q.Float64()
	return f
}

var (
	maxDuration = big.NewInt(math.MaxInt64)
	minDuration = big.NewInt(math.MinInt64)
)

// Duration is x seconds as the nearest time.Duration; false when x is not
// finite or its nearest nanosecond is beyond what a Duration holds (about
// 292 years either way).
func Duration(x float64) (time.Duration, bool) {
	if n, ok := smallNanos(x); ok {
		return time.Duration(n), true
	}
	n, ok := nanosOf(x)
	if !ok || n.Cmp(maxDuration) > 0 || n.Cmp(minDuration) < 0 {
		return 0, false
	}
	return time.Duration(n.Int64()), true
}

// Seconds is d as the nearest float64 number of seconds.
func Seconds(d time.Duration) float64 {
	return secondsOf(big.NewInt(int64(d)))
}

// Time limits: the instants of whole Unix seconds in ±2^62, which time.Time
// holds with room to spare (its own range reaches past ±2^63 seconds from
// the year 1) and whose nanoseconds no conversion can overflow.
var (
	maxUnixNanos = new(big.Int).Mul(big.NewInt(1<<62), big.NewInt(nanosPerSecond))
	minUnixNanos = new(big.Int).Neg(maxUnixNanos)
)

// Time is x Unix seconds as the nearest instant of whole nanoseconds, in
// UTC; false when x is not finite or lies beyond ±2^62 seconds (about 146
// billion years).
func Time(x float64) (time.Time, bool) {
	if n, ok := smallNanos(x); ok {
		// Within ±292 years of 1970, well inside the limits.
		return time.Unix(0, n).UTC(), true
	}
	n, ok := nanosOf(x)
	if !ok || n.Cmp(maxUnixNanos) > 0 || n.Cmp(minUnixNanos) < 0 {
		return time.Time{}, false
	}
	sec, nsec := new(big.Int).DivMod(n, big.NewInt(nanosPerSecond), new(big.Int))
	return time.Unix(sec.Int64(), nsec.Int64()).UTC(), true
}

// UnixSeconds is t as the nearest float64 number of Unix seconds.
func UnixSeconds(t time.Time) float64 {
	n := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(nanosPerSecond))
	return secondsOf(n.Add(n, big.NewInt(int64(t.Nanosecond()))))
}
