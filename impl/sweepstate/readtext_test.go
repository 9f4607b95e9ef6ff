package sweepstate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
)

// TestReadTextServesTheEngineText: a file this engine wrote is answered
// from its text (the fast path is taken, so FuzzReadText compares
// something), with the bytes Run's payload marshals to, and so is one with
// a comment and a blank line added by hand; a file in a form it does not
// write (a key out of its order) gets Run's document instead.
func TestReadTextServesTheEngineText(t *testing.T) {
	var eng sweepstate.Engine
	state := leased(t)
	for _, c := range []sweepstate.Command{
		sweepstate.UpsertItem{Source: "gh", ID: "1", Writer: "w", Now: now,
			Fields: json.RawMessage(`{"title": "caf\u00e9 \ud83d\ude00", "n": 123456789012345678901234567890, "f": [1e16, -0.0, 0.1], "m": {"b": {}, "a": [1, "x", null]}}`)},
		sweepstate.CursorAdvance{Source: "gh", To: "7", PastItem: "1", Writer: "w", Now: now},
		sweepstate.RunRecord{Writer: "w", Outcome: sweepstate.OutcomePartial, Counts: map[string]int{"ingested": 1}, Timestamp: now},
	} {
		if res := eng.Run(state, c); res.Word != sweepstate.WordOK {
			t.Fatalf("%T: %s %s", c, res.Word, res.Reason)
		}
	}
	bench := state + ".bench"
	if err := os.WriteFile(bench, benchseed.SweepState(50), 0o600); err != nil {
		t.Fatal(err)
	}
	engine := readFile(t, state)
	commented := state + ".commented"
	if err := os.WriteFile(commented, append([]byte("# a hand edit\n\n"), engine...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{state, bench, commented} {
		res, text := eng.ReadText(p)
		want, _ := eng.Run(p, sweepstate.Read{}).Payload.MarshalJSON()
		var got bytes.Buffer
		text.WriteTo(&got)
		if res.Word != sweepstate.WordOK || !res.Payload.IsZero() || !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%s: ReadText %s, document %v, text %s; want OK and the text %s", p, res.Word, !res.Payload.IsZero(), got.Bytes(), want)
		}
	}
	if err := os.WriteFile(state, append([]byte("zz_note: 1\n"), engine...), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, text := eng.ReadText(state); res.Word != sweepstate.WordOK || res.Payload.IsZero() || text.Len() != 0 {
		t.Fatalf("a key out of order: ReadText %s, document %v, %d bytes of text; want Run's document", res.Word, !res.Payload.IsZero(), text.Len())
	}
}
