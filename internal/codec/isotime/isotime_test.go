package isotime

import (
	"testing"
	"time"
)

func TestParseMatchesPython(t *testing.T) {
	for _, c := range pythonCases {
		got, ok := Parse(c.in)
		if ok != c.ok || (ok && int64(got) != c.micros) {
			t.Errorf("Parse(%q) = %d, %v; Python gives %d, %v", c.in, got, ok, c.micros, c.ok)
		}
	}
}

func TestParseInvalidUTF8Separator(t *testing.T) {
	// Python sees the invalid byte as a lone surrogate and accepts it only
	// as the separator.
	if _, ok := Parse("2026-07-02\xff12:00"); !ok {
		t.Error("invalid byte as separator should parse")
	}
	if _, ok := Parse("2026-07-02T12:\xff0"); ok {
		t.Error("invalid byte inside the time must not parse")
	}
}

func TestFormat(t *testing.T) {
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC), "2026-07-02T12:00:00+00:00"},
		{time.Date(2026, 7, 2, 12, 0, 0, 123456789, time.UTC), "2026-07-02T12:00:00.123456+00:00"},
		{time.Date(2026, 7, 2, 14, 0, 0, 1000, time.FixedZone("x", 7200)), "2026-07-02T12:00:00.000001+00:00"},
		{time.Date(5, 1, 1, 0, 0, 0, 999, time.UTC), "0005-01-01T00:00:00+00:00"},
	}
	for _, c := range cases {
		if got := Format(c.t); got != c.want {
			t.Errorf("Format(%v) = %q, want %q", c.t, got, c.want)
		}
		if _, ok := Parse(Format(c.t)); !ok {
			t.Errorf("Parse cannot read Format(%v)", c.t)
		}
	}
}
