package sweep_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// Instants below were computed with CPython 3.11.7 as microseconds between
// the parsed time (naive taken as UTC, a trailing Z as +00:00) and
// 0001-01-01T00:00:00+00:00.
const (
	noon20260702 = 63918590400000000 // 2026-07-02T12:00:00Z
	day20260702  = 63918547200000000 // 2026-07-02T00:00:00Z
	lastMicro    = 315537897599999999
)

func TestParseTimeAccepted(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"2026-07-02T12:00:00Z", noon20260702},
		{"2026-07-02T12:00:00+00:00", noon20260702},
		{"2026-07-02T12:00:00", noon20260702}, // naive is UTC
		{"2026-07-02t12:00:00", noon20260702},
		{"2026-07-02 12:00:00", noon20260702},
		{"2026-07-02X12:00:00", noon20260702}, // any one character separates
		{"2026-07-02é12:00", noon20260702},    // even a non-ASCII one
		{"20260702T120000Z", noon20260702},    // basic format
		{"2026-07-02", day20260702},           // date only
		{"20260702", day20260702},
		{"2026-07-02T12:00:00+0000", noon20260702},
		{"2026-07-02T12:00:00+00", noon20260702},
		{"2026-07-02T12Z", noon20260702}, // reduced precision
		{"2026-07-02T12:00Z", noon20260702},
		{"2026-07-02T12:00:00,5", noon20260702 + 500000}, // comma decimal mark
		{"2026-07-02T12:00:00.1234567", noon20260702 + 123456},
		{"2026-07-02T12:00:00.123456789Z", noon20260702 + 123456},
		{"2026-07-02T12:00:00.1+01", noon20260702 - 3600_000000 + 100000},
		{"2026-07-02T17:35:00.000001+05:30", noon20260702 + 5*60_000000 + 1},
		{"2026-07-02T12:00:00+05:30:15", noon20260702 - (5*3600+30*60+15)*1_000000},
		{"2026-07-02T12:00:00-00:00", noon20260702},
		{"2026-07-02T12:00:00+00:00:00.5", noon20260702}, // zero-second offset: UTC, fraction dropped
		{"2026-07-02T12:00:00:123", noon20260702 + 123000},
		// Quirks of CPython's parser, kept: a fraction right after the hour is
		// a fraction of a second, and a date with a trailing Z becomes
		// "2026-07-02+00:00", where '+' is the separator and "00:00" the time.
		{"2026-07-02T12.5", noon20260702 + 500000},
		{"2026-07-02Z", day20260702},
		{"2026-W27-4", day20260702}, // ISO week date: Thursday of week 27
		{"2026W274", day20260702},
		{"2026-W27-4T12:00", noon20260702},
		{"0001-01-01T00:00:00", 0},
		{"0001-01-01T00:00:00+00:01", -60_000000},
		{"9999-12-31T23:59:59.999999", lastMicro},
		{"9999-12-31T23:59:59.999999-00:01", lastMicro + 60_000000},
		// An invalid byte as the separator stands for 'T' (Python replaces
		// that one lone surrogate).
		{"2026-07-02\xff12:00", noon20260702},
		// Python swaps only a surrogate for 'T', here the one at code point
		// 10; the é at 7 is the week date's separator and the 'T' is one
		// byte of junk before the offset, which the C parser ignores.
		{"2026W27é12\x80+01:00", noon20260702 - 3*86_400_000_000 - 3_600_000_000},
	}
	for _, c := range cases {
		got, ok := sweep.ParseTime(c.in)
		if !ok || int64(got) != c.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", c.in, got, ok, c.want)
		}
	}
}

func TestParseTimeRefused(t *testing.T) {
	for _, in := range []string{
		"2026-07-02T12:00:00z", // lowercase z
		" 2026-07-02T12:00:00", "2026-07-02T12:00:00 ",
		"2026-07-02T24:00:00", "2026-07-02T23:59:60",
		"0000-01-01T00:00:00", "2026-07-02T12:00:00+24:00",
		"2026-02-29", "2026-13-01", "2026-07-32", "2026-7-2",
		"2026001", "2026-07", "2026-07-02T", "2026-07-02T12:",
		"2026-07-02T1", "2021-W53", "2026-W00", "2026-W27-8",
		"2026-07-02T12:00:00+05:30Z", "not a time", "",
		// An invalid byte is a lone surrogate to Python, which refuses it
		// anywhere but the separator (CPython 3.11.7 raises ValueError for
		// each of these).
		"2026-07-02T12:00\x80+01:00", "2026W27T1200\xffZ",
		"2026-07-02T12:00:00,123456789\xff+05:30", "2026-07-02\xff12:00\x80",
		// A non-ASCII character at code point 10 that is not the separator
		// stays as its UTF-8 bytes, and the C parser refuses them.
		"2026W27T12é+01:00", "2026W20T12😀Z",
	} {
		if got, ok := sweep.ParseTime(in); ok {
			t.Errorf("ParseTime(%q) = %d, want refused", in, got)
		}
	}
}

// lease builds a lease held by w, stamped at ts, with the given TTL value.
func lease(w, ts string, ttl value.Value) *value.Map {
	m := value.NewMap()
	m.Set("writer", w)
	m.Set("timestamp", ts)
	m.Set("ttl_minutes", ttl)
	return m
}

func docWithLease(l *value.Map) sweep.State {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	doc.Set("lease", l)
	return sweep.State{Kind: sweep.Parsed, Doc: doc}
}

func TestStaleness(t *testing.T) {
	cases := []struct {
		ts   string
		ttl  value.Value
		now  string
		want string
	}{
		{"2026-07-02T12:00:00Z", value.Int(5), "2026-07-02T12:05:00Z", sweep.Locked},
		{"2026-07-02T12:00:00Z", value.Int(5), "2026-07-02T12:05:00.000001Z", sweep.StaleReclaimed},
		{"2026-07-02T12:00:00Z", value.Int(5), "2026-07-02T17:35:00+05:30", sweep.Locked},
		{"2026-07-02T12:00:00Z", value.Int(5), "2026-07-02T17:35:00.000001+05:30", sweep.StaleReclaimed},
		{"2026-07-02T12:00:00", value.Int(5), "2026-07-02T12:05:00.000001", sweep.StaleReclaimed},
		{"2026-07-02T12:00:00Z", "30", "2026-07-02T12:30:00Z", sweep.Locked},
		{"2026-07-02T12:00:00Z", "30", "2026-07-02T12:30:00.000001Z", sweep.StaleReclaimed},
		{"2026-07-02T12:00:00Z", 1.9, "2026-07-02T12:01:00.000001Z", sweep.StaleReclaimed},
		{"2026-07-02T12:00:00Z", true, "2026-07-02T12:01:00Z", sweep.Locked},
		{"2026-07-02T12:00:00Z", nil, "2026-07-02T13:00:00Z", sweep.Locked}, // null: 60
		{"2026-07-02T12:00:00Z", "abc", "2026-07-02T13:00:00.000001Z", sweep.StaleReclaimed},
		{"2026-07-02T12:00:00Z", []value.Value{}, "2026-07-02T13:00:00Z", sweep.Locked},
		// Year 1 to year 9999: far beyond time.Duration's range.
		{"0001-01-01T00:00:00Z", value.Int(5258964960), "9999-12-31T23:59:59.999999Z", sweep.Locked},
		{"0001-01-01T00:00:00Z", value.Int(5258964958), "9999-12-31T23:59:59.999999Z", sweep.StaleReclaimed},
		{"0001-01-01T00:00:00Z", value.Int(5258964959), "9999-12-31T23:59:00Z", sweep.Locked},
		{"0001-01-01T00:00:00Z", value.Int(5258964959), "9999-12-31T23:59:00.000001Z", sweep.StaleReclaimed},
		// Unparseable on either side: never provably stale.
		{"yesterday", value.Int(0), "2026-07-02T12:00:00Z", sweep.Locked},
		{"2026-07-02T12:00:00Z", value.Int(0), "later", sweep.Locked},
		{"2026-07-02T12:00:00Z", value.Int(-5), "2026-07-02T12:00:00Z", sweep.StaleReclaimed},
	}
	for _, c := range cases {
		st := docWithLease(lease("w1", c.ts, c.ttl))
		res, _ := sweep.Apply(st, sweep.LeaseAcquire{Writer: "w2", Now: c.now})
		if res.Word != c.want {
			t.Errorf("lease %s ttl %v, now %s: %s, want %s", c.ts, c.ttl, c.now, res.Word, c.want)
		}
	}
}

func TestCursorLess(t *testing.T) {
	cases := []struct {
		a, b string
		less bool
	}{
		{"9", "10", true}, {"10", "9", false}, {"0010", "10", false}, {"10", "0010", false},
		{"99999999999999999999999", "100000000000000000000000", true},
		{"10a", "9", true}, {"9", "9a", true}, {"a", "b", true}, {"B", "a", true},
		{"", "0", true}, {"1700000000.000100", "1700000000.000200", true},
		{"é", "z", false}, {"\U0001F600", "\uffff", false},
		// Decimal digits of other scripts compare as integers too.
		{"\u0669", "\u0661\u0660", true}, {"\U0001D7D7", "10", true}, {"\U0001D7E1", "\U0001D7D7", false},
		// D11: digits that pass str.isdigit but are not decimal (where the
		// reference's int() raises) make the value text.
		{"9\u00b2", "10", false}, {"10", "9\u00b2", true}, {"\u00b2", "10", false},
		{"\u2460", "9", false}, {"1\u2080", "10", false}, {"10", "1\u2080", true},
		// No digit limit here, where the reference's int() raises past 4300
		// digits (§9.3).
		{strings.Repeat("1", 4301), strings.Repeat("2", 4301), true}, {strings.Repeat("9", 5000), "1", false},
	}
	for _, c := range cases {
		if got := sweep.CursorLess(c.a, c.b); got != c.less {
			t.Errorf("CursorLess(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestTruthy(t *testing.T) {
	one := value.NewMap()
	one.Set("a", nil)
	falsy := []value.Value{nil, false, value.Int(0), 0.0, math.Copysign(0, -1), "", []value.Value{}, value.NewMap()}
	truthy := []value.Value{true, value.Int(-1), new(big.Int).Lsh(big.NewInt(1), 80), 1e-300, "0", " ", []value.Value{value.Int(0)}, one}
	for _, v := range falsy {
		if sweep.Truthy(v) {
			t.Errorf("Truthy(%#v) = true", v)
		}
	}
	for _, v := range truthy {
		if !sweep.Truthy(v) {
			t.Errorf("Truthy(%#v) = false", v)
		}
	}
}

func TestPyInt(t *testing.T) {
	cases := []struct {
		in   value.Value
		want int64
		ok   bool
	}{
		{"30", 30, true}, {" 30\n", 30, true}, {"+7", 7, true}, {"-3", -3, true}, {"1_000", 1000, true},
		{"007", 7, true}, {1.9, 1, true}, {-1.9, -1, true}, {true, 1, true}, {false, 0, true}, {value.Int(42), 42, true},
		{"1.5", 0, false}, {"abc", 0, false}, {"", 0, false}, {"_1", 0, false}, {"1__0", 0, false}, {"1_", 0, false},
		{nil, 0, false}, {[]value.Value{}, 0, false}, {value.NewMap(), 0, false},
		{"\u0663\u0660", 30, true}, {"\U0001D7E1", 9, true}, {"\u00b2", 0, false},
		{"\x1e8", 0, false}, {"8\x1d", 0, false}, {"\u20058\u2029", 8, true}, // int() leaves U+001C..U+001F alone
		{strings.Repeat("1", 4300), 0, true}, {strings.Repeat("1", 4301), 0, false},
	}
	for _, c := range cases {
		got, ok := sweep.PyInt(c.in)
		if ok != c.ok || (ok && got.IsInt64() && got.Int64() != c.want) {
			t.Errorf("PyInt(%#v) = %v, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestPyStr(t *testing.T) {
	m := value.NewMap()
	m.Set("k", "it's")
	cases := []struct {
		in   value.Value
		want string
	}{
		{nil, "None"}, {true, "True"}, {false, "False"}, {value.Int(5), "5"}, {1.5, "1.5"}, {1e16, "1e+16"},
		{1e-05, "1e-05"}, {123456789.0, "123456789.0"}, {math.Copysign(0, -1), "-0.0"}, {"plain", "plain"},
		{[]value.Value{value.Int(1), "a", nil}, "[1, 'a', None]"}, {m, `{'k': "it's"}`},
	}
	for _, c := range cases {
		if got := sweep.PyStr(c.in); got != c.want {
			t.Errorf("PyStr(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestNonDecimalDigitCursors pins divergence D11 at the model level: where
// the reference raises (both cursors pass str.isdigit, one holds a
// superscript or circled digit), cursor-advance and import-legacy compare
// the values as text.
func TestNonDecimalDigitCursors(t *testing.T) {
	withCursor := func(cursor string) sweep.State {
		st := docWithLease(lease("w1", "2026-07-02T12:00:00Z", value.Int(60)))
		src := value.NewMap()
		src.Set("cursor", cursor)
		sources := value.NewMap()
		sources.Set("gh", src)
		items := value.NewMap()
		items.Set("gh:1", value.NewMap())
		st.Doc.Set("sources", sources)
		st.Doc.Set("items", items)
		return st
	}
	advance := func(to string) sweep.CursorAdvance {
		return sweep.CursorAdvance{Source: "gh", To: to, PastItem: "1", Writer: "w1", Now: "2026-07-02T12:01:00Z"}
	}
	for _, c := range []struct{ stored, to, want string }{
		{"10", "9\u00b2", sweep.OK},
		{"9\u00b2", "10", sweep.Refused},
		{"9\u00b2", "\u2460", sweep.OK},
	} {
		if res, _ := sweep.Apply(withCursor(c.stored), advance(c.to)); res.Word != c.want {
			t.Errorf("cursor-advance %q over %q: %s, want %s", c.to, c.stored, res.Word, c.want)
		}
	}
	legacy := func(cursor string) sweep.ImportLegacy {
		ch := value.NewMap()
		ch.Set("cursor", cursor)
		channels := value.NewMap()
		channels.Set("gh", ch)
		doc := value.NewMap()
		doc.Set("channels", channels)
		return sweep.ImportLegacy{Legacy: sweep.Decoded{Value: doc, OK: true}}
	}
	for _, c := range []struct {
		stored, legacy string
		imported       bool
	}{{"10", "9\u00b2", true}, {"\u2083", "10", false}} {
		res, next := sweep.Apply(withCursor(c.stored), legacy(c.legacy))
		if got := res.Wrote; got != c.imported {
			t.Errorf("import-legacy %q over %q: wrote %v, want %v (%s)", c.legacy, c.stored, got, c.imported, docText(next))
		}
	}
}

// TestImportLegacyNonStringCursors: the channel's cursor is Python's
// `last_processed_ts or cursor`; only a null result skips the channel, and
// the value is stored as it is, as the reference does (spec 12.2).
func TestImportLegacyNonStringCursors(t *testing.T) {
	channel := func(kv ...value.Value) *value.Map {
		m := value.NewMap()
		for i := 0; i+1 < len(kv); i += 2 {
			m.Set(kv[i].(string), kv[i+1])
		}
		return m
	}
	channels := value.NewMap()
	channels.Set("C42", channel("cursor", 1.5))
	channels.Set("C1", channel("cursor", ""))
	channels.Set("C3", channel("last_processed_ts", value.Int(0), "cursor", false))
	channels.Set("C4", channel("last_processed_ts", value.Int(0)))                // 0 or None: skipped
	channels.Set("C5", channel("last_processed_ts", "", "cursor", nil))           // "" or None: skipped
	channels.Set("C6", channel("last_processed_ts", nil, "cursor", value.Int(0))) // None or 0: 0
	legacy := value.NewMap()
	legacy.Set("channels", channels)
	res, next := sweep.Apply(sweep.State{Kind: sweep.Absent}, sweep.ImportLegacy{Legacy: sweep.Decoded{Value: legacy, OK: true}})
	if got := string(pyjson.Encode(res.Payload)); got != `{"cursors_imported": 4, "items_imported": 0}` {
		t.Errorf("payload %s", got)
	}
	sources, _ := next.Doc.Get("sources")
	want := `{"C1": {"cursor": ""}, "C3": {"cursor": false}, "C42": {"cursor": 1.5}, "C6": {"cursor": 0}}`
	if got := string(pyjson.Encode(sources)); got != want {
		t.Errorf("sources %s\nwant    %s", got, want)
	}
}
