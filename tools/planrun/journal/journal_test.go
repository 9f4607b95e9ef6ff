package journal

import "testing"

// TestParseCutLine: a last line without its newline (a write cut short by
// the kill) is ignored, so the call it would have ended stays in flight.
func TestParseCutLine(t *testing.T) {
	full := BeginLine(0) + EndLine(0, End{Hash: "-", Stdout: "OK\\n"}) + BeginLine(1)
	cut := EndLine(1, End{Hash: "-", Stdout: "a long answer"})
	for _, tc := range []struct {
		text     string
		ended    int
		inFlight int
	}{
		{full, 1, 1},
		{full + cut[:len(cut)-5], 1, 1},
		{full + cut, 2, -1},
		{full + cut + "B", 2, -1},
		{"", 0, -1},
	} {
		j, err := Parse(tc.text)
		if err != nil || len(j.Ended) != tc.ended || j.InFlight != tc.inFlight {
			t.Errorf("Parse(%q) = %d ended, in flight %d, %v; want %d, %d", tc.text, len(j.Ended), j.InFlight, err, tc.ended, tc.inFlight)
		}
	}
	if _, err := Parse("B 0\nB 1\n"); err == nil {
		t.Error("a begin without an end before the next begin was accepted")
	}
}
