package sweep

// This file is the model's own reading of Python 3.11's
// datetime.fromisoformat (the C implementation the reference engine runs),
// spec/sweep-state.md §8 and §7.5. It works on bytes, like the C code, and treats every
// position past the end as a NUL byte, which is what the C code sees.

import "unicode/utf8"

// Instant is a point in time in microseconds since 0001-01-01T00:00:00Z.
// An int64 holds the whole range of years 1 to 9999 with room to spare; no
// time.Duration is involved (it overflows after about 292 years).
type Instant int64

const (
	microsPerSecond = int64(1_000_000)
	microsPerDay    = 86_400 * microsPerSecond
)

// ParseTime reads s as the reference engine does: a trailing "Z" is first
// replaced by "+00:00", then the text is parsed like Python 3.11's
// datetime.fromisoformat, and a time without an offset is taken as UTC.
// Digits beyond the sixth fraction digit are dropped (§8.1). It reports false
// for any text Python would refuse.
func ParseTime(s string) (Instant, bool) {
	if len(s) > 0 && s[len(s)-1] == 'Z' {
		s = s[:len(s)-1] + "+00:00"
	}
	// Python counts code points for its minimum length of 7. Each invalid
	// byte is a lone surrogate to it (one code point per byte, as []rune
	// counts it): the first one found at code point 7, 8 or 10 becomes 'T',
	// and any other makes the text unencodable as UTF-8, so refused. Valid
	// non-ASCII text stays as its UTF-8 bytes for the C parser.
	if utf8.RuneCountInString(s) < 7 {
		return 0, false
	}
	s, ok := swapSeparatorSurrogate(s)
	if !ok {
		return 0, false
	}
	p := isoText(s)
	sep := p.separatorAt()
	if sep < 0 {
		return 0, false
	}
	year, month, day, ok := p.parseDate(sep)
	if !ok {
		return 0, false
	}
	var hour, minute, second, micro int
	var offsetMicros int64
	if len(s) > sep {
		// The C code steps over the separator by the length its UTF-8
		// lead byte tells, so any one character may separate.
		start := sep + utf8SeqLen(s[sep])
		if start > len(s) {
			return 0, false
		}
		t := isoText(s[start:])
		var tzOK bool
		hour, minute, second, micro, offsetMicros, tzOK = t.parseTimeAndOffset()
		if !tzOK {
			return 0, false
		}
	}
	if year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) ||
		hour > 23 || minute > 59 || second > 59 {
		return 0, false
	}
	days := int64(ordinal(year, month, day) - 1)
	local := days*microsPerDay + int64(hour*3600+minute*60+second)*microsPerSecond + int64(micro)
	return Instant(local - offsetMicros), true
}

// swapSeparatorSurrogate replaces the invalid byte at the first of code
// points 7, 8 and 10 that holds one with 'T'; false when s holds any other
// invalid byte.
func swapSeparatorSurrogate(s string) (string, bool) {
	swapAt := -1 // byte offset
	pos := 0     // code point position
	for i := 0; i < len(s); pos++ {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			if swapAt >= 0 || (pos != 7 && pos != 8 && pos != 10) {
				return "", false
			}
			swapAt = i
		}
		i += n
	}
	if swapAt < 0 {
		return s, true
	}
	return s[:swapAt] + "T" + s[swapAt+1:], true
}

// utf8SeqLen is the length of the UTF-8 sequence a lead byte announces, as
// the C code reads it (continuation bytes count as two).
func utf8SeqLen(lead byte) int {
	switch {
	case lead < 0x80:
		return 1
	case lead&0xf0 == 0xe0:
		return 3
	case lead&0xf0 == 0xf0:
		return 4
	}
	return 2
}

// isoText is the input with C-string semantics: reading past the end gives 0.
type isoText string

func (p isoText) at(i int) byte {
	if i < 0 || i >= len(p) {
		return 0
	}
	return p[i]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits reads n ASCII digits at i; ok is false when any is not a digit.
func (p isoText) digits(i, n int) (v int, next int, ok bool) {
	for k := 0; k < n; k++ {
		c := p.at(i + k)
		if !isDigit(c) {
			return 0, 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, i + n, true
}

// separatorAt finds where the date ends: Python decides it from the shape of
// the first characters (calendar, basic or ISO week date), not by scanning
// for a 'T'; any single character may separate date and time.
func (p isoText) separatorAt() int {
	n := len(p)
	if n == 7 {
		return 7
	}
	if p.at(4) == '-' {
		if p.at(5) != 'W' {
			return 10 // YYYY-MM-DD
		}
		if n < 8 {
			return -1
		}
		if n > 8 && p.at(8) == '-' {
			if n == 9 {
				return -1
			}
			if n > 10 && isDigit(p.at(10)) {
				return 8 // YYYY-Www then a '-' separator and a time
			}
			return 10 // YYYY-Www-D
		}
		return 8 // YYYY-Www
	}
	if p.at(4) == 'W' {
		idx := 7
		for idx < n && isDigit(p.at(idx)) {
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

// parseDate reads the date part; like the C code it parses from the start
// and relies on the byte after the date being the separator.
func (p isoText) parseDate(sep int) (year, month, day int, ok bool) {
	year, i, ok := p.digits(0, 4)
	if !ok {
		return 0, 0, 0, false
	}
	dash := p.at(i) == '-'
	if dash {
		i++
	}
	if p.at(i) == 'W' {
		i++
		week, j, ok := p.digits(i, 2)
		if !ok {
			return 0, 0, 0, false
		}
		i = j
		weekday := 1
		if i < sep {
			if dash {
				if p.at(i) != '-' {
					return 0, 0, 0, false
				}
				i++
			}
			weekday, _, ok = p.digits(i, 1)
			if !ok {
				return 0, 0, 0, false
			}
		}
		return isoWeekDate(year, week, weekday)
	}
	month, i, ok = p.digits(i, 2)
	if !ok {
		return 0, 0, 0, false
	}
	if dash {
		if p.at(i) != '-' {
			return 0, 0, 0, false
		}
		i++
	}
	day, _, ok = p.digits(i, 2)
	if !ok {
		return 0, 0, 0, false
	}
	return year, month, day, true
}

// parseTimeAndOffset reads "HH[:MM[:SS[.ffffff]]]" and an optional offset
// that starts at the first 'Z', '+' or '-'.
func (p isoText) parseTimeAndOffset() (hour, minute, second, micro int, offset int64, ok bool) {
	end := len(p)
	tz := 0
	for {
		c := p.at(tz)
		if c == 'Z' || c == '+' || c == '-' {
			break
		}
		tz++
		if tz >= end {
			break
		}
	}
	hour, minute, second, micro, more, ok := p.clock(0, tz)
	if !ok {
		return
	}
	if tz == end {
		// No offset: trailing text is an error.
		ok = !more
		return
	}
	if p.at(tz) == 'Z' {
		ok = p.at(tz+1) == 0
		return
	}
	sign := int64(1)
	if p.at(tz) == '-' {
		sign = -1
	}
	th, tm, ts, tus, tmore, tok := p.clock(tz+1, end)
	if !tok || tmore {
		return 0, 0, 0, 0, 0, false
	}
	seconds := sign * int64(th*3600+tm*60+ts)
	if seconds == 0 {
		// Python returns UTC for a zero-second offset and drops its fraction.
		return hour, minute, second, micro, 0, true
	}
	offset = seconds*microsPerSecond + sign*int64(tus)
	// Python's timezone() accepts only offsets strictly inside one day.
	if offset <= -microsPerDay || offset >= microsPerDay {
		return 0, 0, 0, 0, 0, false
	}
	return hour, minute, second, micro, offset, true
}

// clock reads [HH[:?MM[:?SS[.,]ffffff...]]] between from and end, as the C
// function parse_hh_mm_ss_ff does; more reports text left before the NUL.
func (p isoText) clock(from, end int) (h, m, s, us int, more, ok bool) {
	vals := [3]int{}
	i := from
	colon := true
	for k := 0; k < 3; k++ {
		v, j, dok := p.digits(i, 2)
		if !dok {
			return 0, 0, 0, 0, false, false
		}
		vals[k] = v
		c := p.at(j)
		i = j + 1
		if k == 0 {
			colon = c == ':'
		}
		if i >= end {
			return vals[0], vals[1], vals[2], 0, c != 0, true
		}
		if colon && c == ':' {
			continue
		}
		if c == '.' || c == ',' {
			break
		}
		if !colon {
			i--
			continue
		}
		return 0, 0, 0, 0, false, false
	}
	// After three fields (or a '.'/','), the C code reads a fraction.
	n := end - i
	if n > 6 {
		n = 6
	}
	f, j, dok := p.digits(i, n)
	if !dok {
		return 0, 0, 0, 0, false, false
	}
	for k := n; k < 6; k++ {
		f *= 10
	}
	for isDigit(p.at(j)) {
		j++ // digits past the sixth are dropped
	}
	return vals[0], vals[1], vals[2], f, p.at(j) != 0, true
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

var daysBeforeMonthTable = [13]int{0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}

func daysInMonth(y, m int) int {
	if m == 2 && isLeap(y) {
		return 29
	}
	return [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m]
}

// ordinal is the proleptic Gregorian day number, 0001-01-01 being 1.
func ordinal(y, m, d int) int {
	py := y - 1
	days := py*365 + py/4 - py/100 + py/400 + daysBeforeMonthTable[m]
	if m > 2 && isLeap(y) {
		days++
	}
	return days + d
}

// fromOrdinal inverts ordinal for day numbers 1 and up.
func fromOrdinal(n int) (y, m, d int) {
	y = (n-1)*400/146097 + 1 // close guess, corrected below
	for ordinal(y, 1, 1) > n {
		y--
	}
	for ordinal(y+1, 1, 1) <= n {
		y++
	}
	m = 1
	for m < 12 && ordinal(y, m+1, 1) <= n {
		m++
	}
	return y, m, n - ordinal(y, m, 1) + 1
}

// isoWeekDate converts an ISO week date; week 53 exists only in years that
// start on a Thursday, or leap years starting on a Wednesday. ISO year 0 is
// refused outright: every day of it falls in the unsupported year 0.
func isoWeekDate(year, week, weekday int) (int, int, int, bool) {
	if year < 1 {
		return 0, 0, 0, false
	}
	first := ordinal(year, 1, 1)
	firstWeekday := (first + 6) % 7 // Monday is 0
	if week <= 0 || week >= 53 {
		if !(week == 53 && (firstWeekday == 3 || (firstWeekday == 2 && isLeap(year)))) {
			return 0, 0, 0, false
		}
	}
	if weekday <= 0 || weekday >= 8 {
		return 0, 0, 0, false
	}
	monday := first - firstWeekday
	if firstWeekday > 3 {
		monday += 7
	}
	y, m, d := fromOrdinal(monday + (week-1)*7 + weekday - 1)
	return y, m, d, true
}
