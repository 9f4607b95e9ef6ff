package sweepstate_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/sweepstate"
)

// cursor-get on a file whose sources is not a mapping (a hand edit)
// answers ERROR with the fixed reason and no payload, on the engine's own
// text (which cursor-get reads streamed, without its items) as on any
// other; a sources mapping without the source answers a null cursor.
func TestCursorGetRefusesSourcesThatIsNotAMapping(t *testing.T) {
	state := leased(t)
	eng := &sweepstate.Engine{}
	for _, id := range []string{"1", "2", "3"} {
		if res := eng.Run(state, sweepstate.UpsertItem{Source: "gh", ID: id, Fields: map[string]string{"status": "ingested"}, Writer: "w", Now: now}); res.Word != sweepstate.WordOK {
			t.Fatalf("setup: %s %s", res.Word, res.Reason)
		}
	}
	written := readFile(t, state)
	if !strings.Contains(written, "\nsources: {}\n") {
		t.Fatalf("the writer's empty sources changed:\n%s", written)
	}
	if res := eng.Run(state, sweepstate.CursorGet{Source: "gh"}); res.Word != sweepstate.WordOK || res.Payload.IsZero() {
		t.Fatalf("sources {}: %s %s", res.Word, res.Reason)
	} else if c, has := res.Cursor(); has {
		t.Fatalf("sources {}: cursor %q, want null", c)
	}
	for _, odd := range []string{"5", "text", "[]", "[\"gh\"]", "null", "true", "\"{}\""} {
		for _, form := range []string{"engine's text", "hand-edited text"} {
			text := strings.Replace(written, "\nsources: {}\n", "\nsources: "+odd+"\n", 1)
			if form == "hand-edited text" {
				text = "# edited by hand\n" + text
			}
			if err := os.WriteFile(state, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			res := eng.Run(state, sweepstate.CursorGet{Source: "gh"})
			if res.Word != sweepstate.WordError || res.Reason != "the state file's sources is not a mapping" || !res.Payload.IsZero() || !errors.Is(res.Err, sweepstate.ErrNotAMapping) {
				t.Errorf("sources: %s (%s): answered %s %q (Err %v) %v, want ERROR with the sources reason, ErrNotAMapping and no payload", odd, form, res.Word, res.Reason, res.Err, res.Payload)
			}
			if after := readFile(t, state); after != text {
				t.Errorf("sources: %s (%s): the file changed", odd, form)
			}
		}
	}
}
