// Package isotime reads timestamps exactly the way Python 3.11's
// datetime.fromisoformat does (the lease clock of the sweep contract) and
// writes the wall clock the way datetime.isoformat does.
//
// Instants are whole microseconds since 1970-01-01T00:00:00Z held in an
// int64: years 1 to 9999 need about 2^58 microseconds, so every difference
// is exact, and no time.Duration (which overflows after 292 years) is used.
package isotime

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Instant is a point in time in microseconds since the Unix epoch (UTC).
type Instant int64

const (
	microsPerSecond = 1_000_000
	microsPerDay    = 86_400 * microsPerSecond
	// epochOrdinal is the proleptic Gregorian ordinal of 1970-01-01
	// (0001-01-01 is ordinal 1, as in Python's date.toordinal).
	epochOrdinal = 719_163
	// maxOrdinal is the ordinal of 9999-12-31.
	maxOrdinal = 3_652_059
)

// Parse reads s as the reference engine does: a trailing "Z" (uppercase
// only) is first replaced by "+00:00", then the text is read like Python
// 3.11's datetime.fromisoformat, and a time without an offset is UTC. So
// "2026-07-02Z" and "2026W27Z", which fromisoformat alone refuses, are
// midnight UTC. It reports false for any string the reference refuses.
//
// The reference parser is CPython's C implementation: it measures the
// minimum length in code points, then reads the UTF-8 bytes behind a NUL
// terminator, takes any single character as the date/time separator, and
// refuses non-ASCII text elsewhere. The code below does the same on bytes
// and reads a zero byte past the end.
func Parse(s string) (Instant, bool) {
	if strings.HasSuffix(s, "Z") {
		s = s[:len(s)-1] + "+00:00"
	}
	b, ok := sanitize(s)
	if !ok {
		return 0, false
	}
	sep := separatorIndex(b)
	y, mo, d, ok := parseDate(b, sep)
	if !ok {
		return 0, false
	}
	var clock, offset int64
	if len(b) > sep {
		// Skip the separator, whose UTF-8 length its lead byte tells.
		skip := 2
		switch lead := b[sep]; {
		case lead&0x80 == 0:
			skip = 1
		case lead&0xf0 == 0xe0:
			skip = 3
		case lead&0xf0 == 0xf0:
			skip = 4
		}
		start := sep + skip
		if start > len(b) {
			return 0, false
		}
		clock, offset, ok = parseTime(b[start:])
		if !ok {
			return 0, false
		}
	}
	ord, ok := ordinalOf(y, mo, d)
	if !ok {
		return 0, false
	}
	return Instant((ord-epochOrdinal)*microsPerDay + clock - offset), true
}

// sanitize returns the bytes CPython parses. Python sees each byte of
// invalid UTF-8 (from argv) as a lone surrogate; it tolerates one only as the
// separator (code point 7, 8 or 10), where it stands for 'T'.
func sanitize(s string) ([]byte, bool) {
	if utf8.RuneCountInString(s) < 7 {
		// Python counts code points; each invalid byte counts as one, and
		// RuneCountInString counts it as one too.
		return nil, false
	}
	if utf8.ValidString(s) {
		return []byte(s), true
	}
	var points []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			points = append(points, "")
		} else {
			points = append(points, s[i:i+n])
		}
		i += n
	}
	for _, pos := range []int{7, 8, 10} {
		if pos >= len(points) {
			break
		}
		if points[pos] == "" {
			points[pos] = "T"
			break
		}
	}
	var out []byte
	for _, p := range points {
		if p == "" {
			return nil, false
		}
		out = append(out, p...)
	}
	return out, true
}

// at returns b[i], or 0 past the end (CPython reads a NUL terminator there).
func at(b []byte, i int) byte {
	if i < 0 || i >= len(b) {
		return 0
	}
	return b[i]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits reads n ASCII digits at i; it returns the value and the index after.
func digits(b []byte, i, n int) (int, int, bool) {
	v := 0
	for k := 0; k < n; k++ {
		c := at(b, i+k)
		if !isDigit(c) {
			return 0, 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, i + n, true
}

// separatorIndex finds where the date ends, resolving the ambiguities of the
// week-date forms the way CPython 3.11 does.
func separatorIndex(r []byte) int {
	n := len(r)
	if n == 7 {
		return 7
	}
	if r[4] == '-' {
		if r[5] != 'W' {
			return 10 // YYYY-MM-DD
		}
		if n > 8 && r[8] == '-' {
			if n == 9 {
				return 9 // invalid either way; the date parse fails
			}
			if n > 10 && isDigit(r[10]) {
				return 8
			}
			return 10 // YYYY-Www-D
		}
		return 8 // YYYY-Www
	}
	if r[4] == 'W' {
		idx := 7
		for idx < n && isDigit(r[idx]) {
			idx++
		}
		if idx < 9 {
			return idx
		}
		if idx%2 == 0 {
			return 7
		}
		return 8
	}
	return 8 // YYYYMMDD
}

// parseDate reads the date in r[:end] (reading past end like CPython does).
func parseDate(r []byte, end int) (y, mo, d int, ok bool) {
	y, i, ok := digits(r, 0, 4)
	if !ok {
		return
	}
	dashed := at(r, i) == '-'
	if dashed {
		i++
	}
	if at(r, i) == 'W' {
		week, j, ok2 := digits(r, i+1, 2)
		if !ok2 {
			return 0, 0, 0, false
		}
		day := 1
		if j < end {
			if dashed {
				if at(r, j) != '-' {
					return 0, 0, 0, false
				}
				j++
			}
			day, _, ok2 = digits(r, j, 1)
			if !ok2 {
				return 0, 0, 0, false
			}
		}
		return isoWeekToDate(y, week, day)
	}
	mo, i, ok = digits(r, i, 2)
	if !ok {
		return
	}
	if dashed {
		if at(r, i) != '-' {
			return 0, 0, 0, false
		}
		i++
	}
	d, _, ok = digits(r, i, 2)
	return y, mo, d, ok
}

// parseHMS reads [HH[:?MM[:?SS[.,fraction]]]] from r[:end]. It returns the
// clock in microseconds and whether text remains before end (CPython's
// return value 1), or false when malformed.
func parseHMS(r []byte, end int) (h, m, s, us int, more, ok bool) {
	vals := [3]*int{&h, &m, &s}
	i := 0
	colon := true
	for k := 0; k < 3; k++ {
		v, j, ok2 := digits(r, i, 2)
		if !ok2 {
			return 0, 0, 0, 0, false, false
		}
		*vals[k] = v
		c := at(r, j)
		i = j + 1
		if k == 0 {
			colon = c == ':'
		}
		if i >= end {
			return h, m, s, 0, c != 0, true
		}
		switch {
		case colon && c == ':':
			continue
		case c == '.' || c == ',':
		case !colon:
			i--
			continue
		default:
			return 0, 0, 0, 0, false, false
		}
		break
	}
	// A fraction follows (also after a third ':' field, as in CPython).
	n := end - i
	if n > 6 {
		n = 6
	}
	v, j, ok2 := digits(r, i, n)
	if !ok2 {
		return 0, 0, 0, 0, false, false
	}
	for k := n; k < 6; k++ {
		v *= 10
	}
	for isDigit(at(r, j)) {
		j++ // digits beyond the sixth are dropped
	}
	return h, m, s, v, at(r, j) != 0, true
}

// parseTime reads the time and optional offset; both come back in
// microseconds (offset east of UTC is positive).
func parseTime(r []byte) (clock, offset int64, ok bool) {
	end := len(r)
	tz := 0
	for {
		c := at(r, tz)
		if c == 'Z' || c == '+' || c == '-' {
			break
		}
		tz++
		if tz >= end {
			break
		}
	}
	h, m, s, us, more, ok := parseHMS(r, tz)
	if !ok {
		return 0, 0, false
	}
	if h > 23 || m > 59 || s > 59 {
		return 0, 0, false
	}
	clock = ((int64(h)*60+int64(m))*60+int64(s))*microsPerSecond + int64(us)
	if tz >= end {
		return clock, 0, !more
	}
	if r[tz] == 'Z' {
		return clock, 0, at(r, tz+1) == 0
	}
	sign := int64(1)
	if r[tz] == '-' {
		sign = -1
	}
	rest := r[tz+1:]
	oh, om, os, ous, more, ok := parseHMS(rest, len(rest))
	if !ok || more {
		return 0, 0, false
	}
	seconds := (int64(oh)*60+int64(om))*60 + int64(os)
	if seconds == 0 {
		// CPython builds UTC when the whole seconds are zero and drops
		// the offset's fraction (so "+00:00.5" is UTC).
		return clock, 0, true
	}
	offset = sign * (seconds*microsPerSecond + int64(ous))
	// Python's timezone needs an offset strictly inside one day.
	if offset <= -microsPerDay || offset >= microsPerDay {
		return 0, 0, false
	}
	return clock, offset, true
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

var daysBeforeMonth = [13]int{0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}

func daysIn(y, mo int) int {
	if mo == 2 && isLeap(y) {
		return 29
	}
	return [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo]
}

// ordinalOf is date.toordinal for a valid date in years 1 to 9999.
func ordinalOf(y, mo, d int) (int64, bool) {
	if y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return 0, false
	}
	p := y - 1
	days := p*365 + p/4 - p/100 + p/400 + daysBeforeMonth[mo] + d
	if mo > 2 && isLeap(y) {
		days++
	}
	return int64(days), true
}

// fromOrdinal is date.fromordinal for 1 <= n <= maxOrdinal.
func fromOrdinal(n int64) (y, mo, d int) {
	t := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(n-1))
	return t.Year(), int(t.Month()), t.Day()
}

// isoWeekToDate converts an ISO week date, refusing what CPython refuses.
// Years below 1 never yield a valid date, so they are refused up front.
func isoWeekToDate(y, week, day int) (int, int, int, bool) {
	if y < 1 {
		return 0, 0, 0, false
	}
	jan1, _ := ordinalOf(y, 1, 1)
	firstWeekday := (jan1 + 6) % 7 // Monday is 0
	if week <= 0 || week >= 53 {
		if !(week == 53 && (firstWeekday == 3 || (firstWeekday == 2 && isLeap(y)))) {
			return 0, 0, 0, false
		}
	}
	if day <= 0 || day >= 8 {
		return 0, 0, 0, false
	}
	monday := jan1 - firstWeekday
	if firstWeekday > 3 {
		monday += 7
	}
	ord := monday + int64((week-1)*7+day-1)
	if ord < 1 || ord > maxOrdinal {
		return 0, 0, 0, false
	}
	yy, mm, dd := fromOrdinal(ord)
	return yy, mm, dd, true
}

// Format writes t in UTC the way Python's datetime.isoformat() writes an
// aware UTC datetime: microseconds only when non-zero, offset "+00:00".
func Format(t time.Time) string {
	t = t.UTC()
	us := t.Nanosecond() / 1000
	base := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second())
	if us != 0 {
		base += fmt.Sprintf(".%06d", us)
	}
	return base + "+00:00"
}
