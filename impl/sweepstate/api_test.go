package sweepstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/storage/durable"
)

// now is the time the tests stamp; nowText is how the engine writes it.
var now = time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)

const nowText = "2026-07-02T12:00:00+00:00"

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

// Every command the CLI would refuse as misuse (exit 2), and every Go
// value the command line's form cannot carry, is refused before the file
// is touched: ERROR, an Err wrapping ErrInvalidCommand, a reason naming
// the field and not the value, and the file byte for byte as it was.
// A pointer to a command is not a command (the set is closed: before, a
// pointer was taken through reflection).
func TestCommandsTheCLIRefusesAreRefused(t *testing.T) {
	bad := "bad\xffvalue"
	var nilLease *sweepstate.LeaseAcquire
	counts := map[string]int{"ingested": 1}
	cases := []struct {
		name  string
		cmd   sweepstate.Command
		field string
	}{
		{"outcome outside the list", sweepstate.RunRecord{Writer: "w", Outcome: "bogus", Counts: counts, Timestamp: now}, "RunRecord.Outcome"},
		{"empty outcome", sweepstate.RunRecord{Writer: "w", Counts: counts, Timestamp: now}, "RunRecord.Outcome"},
		{"no timestamp", sweepstate.RunRecord{Writer: "w", Outcome: sweepstate.OutcomeCompleted, Counts: counts}, "RunRecord.Timestamp"},
		{"timestamp past year 9999", sweepstate.RunRecord{Writer: "w", Outcome: sweepstate.OutcomeCompleted, Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "RunRecord.Timestamp"},
		{"counts not JSON", sweepstate.RunRecord{Writer: "w", Outcome: sweepstate.OutcomeCompleted, Counts: make(chan int), Timestamp: now}, "RunRecord.Counts"},
		{"negative TTL", sweepstate.LeaseAcquire{Writer: "w", TTLMinutes: -5, Now: now}, "LeaseAcquire.TTLMinutes"},
		{"now before year 1", sweepstate.LeaseAcquire{Writer: "w", Now: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)}, "LeaseAcquire.Now"},
		{"now past year 9999", sweepstate.UpsertItem{Source: "s", ID: "1", Fields: counts, Writer: "w", Now: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "UpsertItem.Now"},
		{"item source not UTF-8", sweepstate.UpsertItem{Source: bad, ID: "1", Fields: counts, Writer: "w", Now: now}, "UpsertItem.Source"},
		{"item fields not UTF-8", sweepstate.UpsertItem{Source: "s", ID: "1", Fields: json.RawMessage(`{"a": "` + bad + `"}`), Writer: "w", Now: now}, "UpsertItem.Fields"},
		{"item fields not an object", sweepstate.UpsertItem{Source: "s", ID: "1", Fields: []int{1}, Writer: "w", Now: now}, "UpsertItem.Fields"},
		{"item fields nil", sweepstate.UpsertItem{Source: "s", ID: "1", Writer: "w", Now: now}, "UpsertItem.Fields"},
		{"item fields NaN", sweepstate.UpsertItem{Source: "s", ID: "1", Fields: map[string]float64{"f": math.NaN()}, Writer: "w", Now: now}, "UpsertItem.Fields"},
		{"item fields raw NaN", sweepstate.UpsertItem{Source: "s", ID: "1", Fields: json.RawMessage(`{"f": NaN}`), Writer: "w", Now: now}, "UpsertItem.Fields"},
		{"writer not UTF-8", sweepstate.CursorAdvance{Source: "s", To: "2", PastItem: "1", Writer: bad, Now: now}, "CursorAdvance.Writer"},
		{"source map not UTF-8", sweepstate.ImportLegacy{File: "legacy.json", SourceMap: map[string]string{"c": bad}}, "ImportLegacy.SourceMap"},
		{"release writer not UTF-8", sweepstate.LeaseRelease{Writer: bad}, "LeaseRelease.Writer"},
		{"cursor-get source not UTF-8", sweepstate.CursorGet{Source: bad}, "CursorGet.Source"},
		{"metrics now past year 9999", sweepstate.Metrics{Now: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "Metrics.Now"},
		{"nil command", nil, "Command"},
		{"nil pointer to a command", nilLease, "Command"},
		{"pointer to a command", &sweepstate.LeaseAcquire{Writer: "w", Now: now}, "Command"},
		{"pointer to read", &sweepstate.Read{}, "Command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := leased(t)
			before := readFile(t, state)
			res := (&sweepstate.Engine{}).Run(state, c.cmd)
			if res.Word != sweepstate.WordError || !errors.Is(res.Err, sweepstate.ErrInvalidCommand) {
				t.Fatalf("answered %s (Err %v), want ERROR wrapping ErrInvalidCommand", res.Word, res.Err)
			}
			if !strings.HasPrefix(res.Reason, c.field+": ") || strings.Contains(res.Reason, "bad") || strings.Contains(res.Err.Error(), "bad") {
				t.Errorf("reason %q (Err %q): want it to name %q and hold no value", res.Reason, res.Err, c.field)
			}
			if after := readFile(t, state); after != before {
				t.Errorf("the file changed:\n%s", after)
			}
		})
	}
}

// The rules are the CLI's, no stricter: a zero TTL (the default), empty
// ids and an empty writer pass the check as the CLI's arguments do, and
// counts may be any JSON value.
func TestWhatTheCLIAcceptsIsAccepted(t *testing.T) {
	for _, cmd := range []sweepstate.Command{
		sweepstate.LeaseAcquire{Writer: "w", TTLMinutes: 0, Now: now},
		sweepstate.UpsertItem{Source: "", ID: "", Fields: map[string]any{}, Writer: "w", Now: now},
		sweepstate.RunRecord{Writer: "w", Outcome: sweepstate.OutcomeAbortedLocked, Counts: 5, Timestamp: now},
		sweepstate.LeaseRelease{Writer: ""},
		sweepstate.Read{},
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
	res := eng.RunContext(ctx, state, sweepstate.UpsertItem{Source: "chat", ID: "1", Fields: map[string]int{"n": 1}, Writer: "w"})
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
	if res := eng.RunContext(context.Background(), state, sweepstate.UpsertItem{Source: "chat", ID: "1", Fields: map[string]int{"n": 1}, Writer: "w"}); res.Word != sweepstate.WordOK {
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
		Fields: json.RawMessage(`{"title": "é <b> & 𝄞", "n": 123456789012345678901234567890, "f": 1e16, "l": [1.5, null, true]}`)}
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
