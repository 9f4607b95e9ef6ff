package sweepstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/storage/durable"
)

const now = "2026-07-02T12:00:00Z"

// leased is a state file whose lease "w" holds: any valid mutating
// command by w would write it.
func leased(t *testing.T) string {
	t.Helper()
	state := filepath.Join(t.TempDir(), "sweep.yml")
	if res := (&sweepstate.Engine{}).Run(state, sweepstate.LeaseAcquire{Writer: "w", Now: now}); res.Word != sweepstate.WordOK {
		t.Fatalf("setup: %s %s", res.Word, res.Reason)
	}
	return state
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every command the CLI would refuse as misuse (exit 2) is refused by the
// engine too, before it touches the file: ERROR, an Err wrapping
// ErrInvalidCommand, a reason naming the field and not the value, and the
// file byte for byte as it was. (Before the engine checked, RunRecord
// stored outcome "bogus", LeaseAcquire stored ttl_minutes -5, and a nil
// Command panicked.)
func TestCommandsTheCLIRefusesAreRefused(t *testing.T) {
	bad := "bad\xffvalue"
	src := bad
	var nilLease *sweepstate.LeaseAcquire
	cases := []struct {
		name  string
		cmd   sweepstate.Command
		field string
	}{
		{"outcome outside the list", sweepstate.RunRecord{Writer: "w", Outcome: "bogus", Counts: "{}", Timestamp: now}, "RunRecord.Outcome"},
		{"empty outcome", sweepstate.RunRecord{Writer: "w", Counts: "{}", Timestamp: now}, "RunRecord.Outcome"},
		{"negative TTL", sweepstate.LeaseAcquire{Writer: "w", TTLMinutes: big.NewInt(-5), Now: now}, "LeaseAcquire.TTLMinutes"},
		{"item source not UTF-8", sweepstate.UpsertItem{Source: bad, ID: "1", JSON: "{}", Writer: "w", Now: now}, "UpsertItem.Source"},
		{"item JSON not UTF-8", sweepstate.UpsertItem{Source: "s", ID: "1", JSON: `{"a": "` + bad + `"}`, Writer: "w", Now: now}, "UpsertItem.JSON"},
		{"writer not UTF-8", sweepstate.CursorAdvance{Source: "s", To: "2", PastItem: "1", Writer: bad, Now: now}, "CursorAdvance.Writer"},
		{"now not UTF-8", sweepstate.LeaseAcquire{Writer: "w", Now: bad}, "LeaseAcquire.Now"},
		{"counts not UTF-8", sweepstate.RunRecord{Writer: "w", Outcome: "completed", Counts: bad, Timestamp: now}, "RunRecord.Counts"},
		{"source map not UTF-8", sweepstate.ImportLegacy{File: "legacy.json", SourceMap: &src}, "ImportLegacy.SourceMap"},
		{"release writer not UTF-8", sweepstate.LeaseRelease{Writer: bad}, "LeaseRelease.Writer"},
		{"cursor-get source not UTF-8", sweepstate.CursorGet{Source: bad}, "CursorGet.Source"},
		{"nil command", nil, ""},
		{"nil pointer to a command", nilLease, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := leased(t)
			before := readFile(t, state)
			res := (&sweepstate.Engine{}).Run(state, c.cmd)
			if res.Word != sweepstate.WordError || !errors.Is(res.Err, sweepstate.ErrInvalidCommand) {
				t.Fatalf("answered %s (Err %v), want ERROR wrapping ErrInvalidCommand", res.Word, res.Err)
			}
			if !strings.HasPrefix(res.Reason, c.field) || strings.Contains(res.Reason, "bad") {
				t.Errorf("reason %q: want it to name %q and hold no value", res.Reason, c.field)
			}
			if after := readFile(t, state); after != before {
				t.Errorf("the file changed:\n%s", after)
			}
		})
	}
}

// The rules are the CLI's, no stricter: a zero TTL, "-0", empty ids and an
// empty writer pass the check as the CLI's arguments do.
func TestWhatTheCLIAcceptsIsAccepted(t *testing.T) {
	for _, cmd := range []sweepstate.Command{
		sweepstate.LeaseAcquire{Writer: "w", TTLMinutes: big.NewInt(0), Now: now},
		sweepstate.UpsertItem{Source: "", ID: "", JSON: "{}", Writer: "w", Now: now},
		sweepstate.RunRecord{Writer: "w", Outcome: "aborted-locked", Counts: "{}", Timestamp: ""},
		sweepstate.LeaseRelease{Writer: ""},
		&sweepstate.Read{}, // a pointer to a command is the command
	} {
		res := (&sweepstate.Engine{}).Run(leased(t), cmd)
		if res.Err != nil || res.Word == sweepstate.WordError {
			t.Errorf("%#v: answered %s (%s), want it run", cmd, res.Word, res.Reason)
		}
	}
}

// A context that has already ended stops the call before anything happens:
// no state file appears even though nobody holds the lock.
func TestRunContextEndedBeforeTheCall(t *testing.T) {
	state := filepath.Join(t.TempDir(), "sweep.yml")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := (&sweepstate.Engine{}).RunContext(ctx, state, sweepstate.LeaseAcquire{Writer: "w", Now: now})
	if res.Word != sweepstate.WordError || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("answered %s (Err %v), want ERROR with context.Canceled", res.Word, res.Err)
	}
	if _, err := os.Lstat(state); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the state file exists (%v)", err)
	}
}

// While another holder has <state>.lock, RunContext waits; when its context
// ends it returns with the context's error, and once the holder lets go the
// abandoned call has written nothing. The deadline is not a synchronisation:
// the lock is held from before the call until after it returns, so the only
// answers are the context's error (the wait ended with it) or no answer at
// all (a wait that ignores the context: the test never finishes).
func TestRunContextLockWaitEndsWithTheContext(t *testing.T) {
	state := leased(t)
	before := readFile(t, state)
	held, err := durable.Acquire(durable.LockPath(state))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := (&sweepstate.Engine{}).RunContext(ctx, state, sweepstate.LeaseAcquire{Writer: "late", Now: now})
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	if res.Word != sweepstate.WordError || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Fatalf("answered %s (Err %v), want ERROR with context.DeadlineExceeded", res.Word, res.Err)
	}
	if after := readFile(t, state); after != before {
		t.Fatalf("the abandoned call wrote:\n%s", after)
	}
	// A live context takes the lock once it is free.
	if res := (&sweepstate.Engine{}).RunContext(context.Background(), state, sweepstate.LeaseRelease{Writer: "w"}); res.Word != sweepstate.WordOK {
		t.Fatalf("after the holder left: %s %s", res.Word, res.Reason)
	}
}

// A context that ends once the lock is held, before the write, still
// stops the write: the call answers ERROR with the context's error and the
// file stays as it was. The engine's clock is read once, under the lock,
// before the decision (an upsert without --now), so a clock that cancels
// the context ends it at exactly that point, with no timing involved.
func TestRunContextEndedUnderTheLockWritesNothing(t *testing.T) {
	state := leased(t)
	before := readFile(t, state)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clockRead := false
	eng := &sweepstate.Engine{Clock: func() time.Time {
		clockRead = true
		cancel()
		return time.Date(2026, 7, 2, 12, 1, 0, 0, time.UTC)
	}}
	res := eng.RunContext(ctx, state, sweepstate.UpsertItem{Source: "chat", ID: "1", JSON: `{"n": 1}`, Writer: "w"})
	if !clockRead {
		t.Fatal("the clock was not read: the test did not end the context under the lock")
	}
	if res.Word != sweepstate.WordError || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("answered %s (Err %v), want ERROR with context.Canceled", res.Word, res.Err)
	}
	if after := readFile(t, state); after != before {
		t.Fatalf("the call whose context ended wrote:\n%s", after)
	}
	// The lock was let go: the same upsert with a live context writes.
	if res := eng.RunContext(context.Background(), state, sweepstate.UpsertItem{Source: "chat", ID: "1", JSON: `{"n": 1}`, Writer: "w"}); res.Word != sweepstate.WordOK {
		t.Fatalf("with a live context: %s %s", res.Word, res.Reason)
	}
}

// json.Marshal of a payload keeps its data: Payload.MarshalJSON is the
// line the CLI prints after the word, byte for byte, and json.Marshal is
// that text compacted with <, > and & escaped, as encoding/json does for
// every Marshaler. (Before, the payload was a bare *value.Map and
// json.Marshal gave {}.)
func TestPayloadMarshalsAsTheCLIPrints(t *testing.T) {
	state := leased(t)
	eng := &sweepstate.Engine{}
	up := sweepstate.UpsertItem{Source: "chat", ID: "1", Writer: "w", Now: now,
		JSON: `{"title": "é <b> & 𝄞", "n": 123456789012345678901234567890, "f": 1e16, "l": [1.5, null, true]}`}
	if res := eng.Run(state, up); res.Word != sweepstate.WordOK {
		t.Fatalf("upsert: %s %s", res.Word, res.Reason)
	}
	res := eng.Run(state, sweepstate.Read{})
	var stdout, stderr bytes.Buffer
	if code := sweepcli.Main([]string{"read", "--state", state}, &stdout, &stderr); code != 0 {
		t.Fatalf("CLI read: exit %d %s", code, stderr.String())
	}
	word, line, _ := strings.Cut(stdout.String(), "\n")
	line = strings.TrimSuffix(line, "\n")
	if word != "OK" || line == "" {
		t.Fatalf("CLI printed %q", stdout.String())
	}
	own, err := res.Payload.MarshalJSON()
	if err != nil || string(own) != line {
		t.Fatalf("MarshalJSON = %s (%v)\nCLI prints  %s", own, err, line)
	}
	got, err := json.Marshal(res.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(line)); err != nil {
		t.Fatal(err)
	}
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, want.Bytes())
	if string(got) != escaped.String() {
		t.Fatalf("json.Marshal = %s\nwant          %s", got, escaped.String())
	}
	if none, _ := json.Marshal(sweepstate.Result{}.Payload); string(none) != "null" {
		t.Errorf("no payload marshals as %s, want null", none)
	}
}
