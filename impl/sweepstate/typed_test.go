package sweepstate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"pgregory.net/rapid"
)

// cli runs the sweep-state command in process and returns its stdout.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := sweepcli.Main(args, &stdout, &stderr); code != 0 {
		t.Fatalf("sweep-state %s: exit %d: %s", args[0], code, stderr.String())
	}
	return stdout.String()
}

// A typed sweep writes the file the command line writes for the same
// arguments, byte for byte: each time as the clock's text --now would
// carry (UTC, microseconds, whatever the time's zone and nanoseconds), the
// TTL as the integer --ttl-minutes would give, the item fields and counts
// as the JSON text --json and --counts would carry.
func TestTypedCommandsWriteWhatTheCLIWrites(t *testing.T) {
	dir := t.TempDir()
	typed, byCLI := filepath.Join(dir, "typed.yml"), filepath.Join(dir, "cli.yml")
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	start := time.Date(2026, 7, 2, 17, 30, 0, 123456789, zone) // 12:00:00.123456789 UTC
	eng := &sweepstate.Engine{Clock: func() time.Time { t.Fatal("the clock was read though every command has a time"); return time.Time{} }}
	for _, c := range []struct {
		cmd  sweepstate.Command
		args []string
	}{
		{sweepstate.LeaseAcquire{Writer: "w", TTLMinutes: 5, Now: start},
			[]string{"lease-acquire", "--writer", "w", "--ttl-minutes", "5", "--now", "2026-07-02T12:00:00.123456+00:00"}},
		{sweepstate.UpsertItem{Source: "gh", ID: "1", Writer: "w", Now: start.Add(time.Minute),
			Fields: map[string]any{"title": "é <b>", "size": json.Number("1180591620717411303424"), "ratio": json.Number("1.0"),
				"big": new(big.Int).Lsh(big.NewInt(1), 70), "tags": []string{"a"}, "n": 3, "f": 0.5, "none": nil}},
			[]string{"upsert-item", "--source", "gh", "--id", "1", "--writer", "w", "--now", "2026-07-02T12:01:00.123456+00:00",
				"--json", `{"big": 1180591620717411303424, "f": 0.5, "n": 3, "none": null, "ratio": 1.0, "size": 1180591620717411303424, "tags": ["a"], "title": "é <b>"}`}},
		{sweepstate.CursorAdvance{Source: "gh", To: "10", PastItem: "1", Writer: "w", Now: start.Add(2 * time.Minute)},
			[]string{"cursor-advance", "--source", "gh", "--to", "10", "--past-item", "1", "--writer", "w", "--now", "2026-07-02T12:02:00.123456+00:00"}},
		{sweepstate.RunRecord{Writer: "w", Outcome: sweepstate.OutcomePartial, Counts: map[string]int{"ingested": 1}, Timestamp: time.Date(2026, 7, 2, 12, 3, 0, 0, time.UTC)},
			[]string{"run-record", "--writer", "w", "--outcome", "partial", "--counts", `{"ingested": 1}`, "--timestamp", "2026-07-02T12:03:00+00:00"}},
		{sweepstate.RunRecord{Writer: "w", Outcome: sweepstate.OutcomeFailed, Timestamp: time.Date(2026, 7, 2, 12, 4, 0, 0, time.UTC)},
			[]string{"run-record", "--writer", "w", "--outcome", "failed", "--counts", `{}`, "--timestamp", "2026-07-02T12:04:00+00:00"}},
		{sweepstate.LeaseAcquire{Writer: "w", Now: start.Add(5 * time.Minute)},
			[]string{"lease-acquire", "--writer", "w", "--now", "2026-07-02T12:05:00.123456+00:00"}},
	} {
		res := eng.Run(typed, c.cmd)
		out := cli(t, append(c.args, "--state", byCLI)...)
		if string(res.Word)+"\n" != out {
			t.Fatalf("%T answered %s, the CLI %q", c.cmd, res.Word, out)
		}
		if got, want := readFile(t, typed), readFile(t, byCLI); got != want {
			t.Fatalf("after %T the files differ:\ntyped:\n%s\nCLI:\n%s", c.cmd, got, want)
		}
	}
	if !strings.Contains(readFile(t, typed), "ttl_minutes: 60") {
		t.Errorf("TTLMinutes 0 did not store the default of 60:\n%s", readFile(t, typed))
	}
}

// Exact values survive a typed round trip: 2^70 given as a json.Number, a
// *big.Int or raw JSON comes back from Decode as the json.Number of its
// digits; a float given as json.Number("1.0") stays a float, and its text
// comes back as Python writes it. The payload's bytes are the command's.
func TestTypedRoundTripKeepsExactNumbers(t *testing.T) {
	state := leased(t)
	eng := &sweepstate.Engine{}
	two70 := "1180591620717411303424"
	up := sweepstate.UpsertItem{Source: "gh", ID: "1", Writer: "w", Now: now, Fields: map[string]any{
		"number": json.Number(two70), "bigint": new(big.Int).Lsh(big.NewInt(1), 70),
		"one": json.Number("1.0"), "huge": json.Number("1e16"), "tiny": json.Number("0.00001"), "half": 0.5,
	}}
	if res := eng.Run(state, up); res.Word != sweepstate.WordOK {
		t.Fatalf("upsert: %s %s", res.Word, res.Reason)
	}
	up = sweepstate.UpsertItem{Source: "gh", ID: "2", Writer: "w", Now: now,
		Fields: json.RawMessage(`{"number": ` + two70 + `, "one": 1.0}`)}
	if res := eng.Run(state, up); res.Word != sweepstate.WordOK {
		t.Fatalf("upsert raw: %s %s", res.Word, res.Reason)
	}
	res := eng.Run(state, sweepstate.Read{})
	var doc struct {
		Items map[string]map[string]any `json:"items"`
	}
	if err := res.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"source": "gh", "id": "1",
		"number": json.Number(two70), "bigint": json.Number(two70),
		"one": json.Number("1.0"), "huge": json.Number("1e+16"), "tiny": json.Number("1e-05"), "half": json.Number("0.5"),
	}
	if got := doc.Items["gh:1"]; !reflect.DeepEqual(got, want) {
		t.Errorf("item gh:1 decoded as\n%#v\nwant\n%#v", got, want)
	}
	if got := doc.Items["gh:2"]; got["number"] != json.Number(two70) || got["one"] != json.Number("1.0") {
		t.Errorf("item gh:2 decoded as %#v", got)
	}
	// Into Go integers of their own size, too.
	var exact struct {
		Items map[string]struct {
			Number *big.Int `json:"number"`
			Half   float64  `json:"half"`
		} `json:"items"`
	}
	if err := res.Decode(&exact); err != nil {
		t.Fatal(err)
	}
	if n := exact.Items["gh:1"].Number; n == nil || n.String() != two70 || exact.Items["gh:1"].Half != 0.5 {
		t.Errorf("into *big.Int and float64: %v %v", n, exact.Items["gh:1"].Half)
	}
	line := strings.SplitN(cli(t, "read", "--state", state), "\n", 3)[1]
	var streamed bytes.Buffer
	if _, err := res.Payload.WriteTo(&streamed); err != nil || streamed.String() != line {
		t.Errorf("Payload.WriteTo wrote %s (%v)\nthe CLI prints      %s", streamed.String(), err, line)
	}
	var raw struct {
		Items json.RawMessage `json:"items"`
	}
	if err := res.Decode(&raw); err != nil || !strings.Contains(line, string(raw.Items)) {
		t.Errorf("raw items %s (%v) are not the CLI's bytes %s", raw.Items, err, line)
	}
	if err := (sweepstate.Result{}).Decode(&raw); !errors.Is(err, sweepstate.ErrNoPayload) {
		t.Errorf("Decode without a payload: %v", err)
	}
}

// The typed accessors read cursor-get's and validate's answers: a cursor
// is text (a number kept from a legacy file as Python's str() of it, the
// text cursor-advance compares), no cursor is false; validate lists the
// keys it downgraded.
func TestTypedAccessors(t *testing.T) {
	state := leased(t)
	eng := &sweepstate.Engine{}
	if _, has := eng.Run(state, sweepstate.CursorGet{Source: "gh"}).Cursor(); has {
		t.Error("a source without a cursor has one")
	}
	for _, id := range []string{"2", "1"} {
		eng.Run(state, sweepstate.UpsertItem{Source: "gh", ID: id, Writer: "w", Now: now, Fields: map[string]string{"status": "closed"}})
	}
	eng.Run(state, sweepstate.UpsertItem{Source: "gh", ID: "3", Writer: "w", Now: now, Fields: map[string]string{
		"status": "closed", "fix_ref": "r", "verified_revision_id": "abc", "verified_at": "t"}})
	if res := eng.Run(state, sweepstate.CursorAdvance{Source: "gh", To: "17", PastItem: "1", Writer: "w", Now: now}); res.Word != sweepstate.WordOK {
		t.Fatalf("cursor-advance: %s %s", res.Word, res.Reason)
	}
	if cursor, has := eng.Run(state, sweepstate.CursorGet{Source: "gh"}).Cursor(); cursor != "17" || !has {
		t.Errorf("cursor %q %v, want 17", cursor, has)
	}
	res := eng.Run(state, sweepstate.Validate{})
	if got := res.Downgraded(); !reflect.DeepEqual(got, []string{"gh:1", "gh:2"}) {
		t.Errorf("downgraded %q, want gh:1 and gh:2", got)
	}
	if got := eng.Run(state, sweepstate.Validate{}).Downgraded(); got == nil || len(got) != 0 {
		t.Errorf("nothing to downgrade: %#v, want an empty list", got)
	}
	if got := eng.Run(state, sweepstate.Read{}).Downgraded(); got != nil {
		t.Errorf("read's answer has downgraded %q", got)
	}
	legacy := filepath.Join(t.TempDir(), "legacy.json")
	if err := os.WriteFile(legacy, []byte(`{"channels": {"C1": {"cursor": 1.5}, "C2": {"cursor": 25}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res = eng.Run(state, sweepstate.ImportLegacy{File: legacy, SourceMap: map[string]string{"C1": "chat", "C2": "gh"}})
	var counts struct {
		Cursors int `json:"cursors_imported"`
		Items   int `json:"items_imported"`
	}
	if err := res.Decode(&counts); err != nil || counts.Cursors != 2 {
		t.Fatalf("import-legacy: %s %v %+v", res.Word, err, counts)
	}
	if cursor, has := eng.Run(state, sweepstate.CursorGet{Source: "chat"}).Cursor(); cursor != "1.5" || !has {
		t.Errorf("a number cursor: %q %v, want 1.5", cursor, has)
	}
	if cursor, _ := eng.Run(state, sweepstate.CursorGet{Source: "gh"}).Cursor(); cursor != "25" {
		t.Errorf("the mapped channel's cursor: %q, want 25", cursor)
	}
}

// A time is the same instant whatever its zone: a lease stamped from
// another zone goes stale exactly TTL minutes later.
func TestTypedTimesAcrossZones(t *testing.T) {
	state := filepath.Join(t.TempDir(), "sweep.yml")
	eng := &sweepstate.Engine{}
	tokyo := time.FixedZone("JST", 9*3600)
	stamped := time.Date(2026, 7, 2, 21, 0, 0, 0, tokyo)
	if res := eng.Run(state, sweepstate.LeaseAcquire{Writer: "a", TTLMinutes: 10, Now: stamped}); res.Word != sweepstate.WordOK {
		t.Fatal(res.Word, res.Reason)
	}
	atTTL := time.Date(2026, 7, 2, 12, 10, 0, 0, time.UTC)
	if res := eng.Run(state, sweepstate.LeaseAcquire{Writer: "b", Now: atTTL}); res.Word != sweepstate.WordLocked {
		t.Fatalf("at the TTL: %s, want LOCKED", res.Word)
	}
	res := eng.Run(state, sweepstate.LeaseAcquire{Writer: "b", Now: atTTL.Add(time.Microsecond)})
	var prev struct {
		Writer    string `json:"previous_writer"`
		Timestamp string `json:"previous_timestamp"`
	}
	if err := res.Decode(&prev); res.Word != sweepstate.WordStaleReclaimed || err != nil || prev.Writer != "a" || prev.Timestamp != "2026-07-02T12:00:00+00:00" {
		t.Fatalf("past the TTL: %s %+v (%v)", res.Word, prev, err)
	}
}

// Every ERROR carries an Err a caller can match: an I/O failure wraps
// ErrIO (before, Err was nil), a part of the file that is not a mapping
// ErrNotAMapping; neither text holds the path.
func TestEveryErrorHasAnErr(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lockedOut := filepath.Join(dir, "lockdir.yml")
	if err := os.Mkdir(lockedOut+".lock", 0o700); err != nil {
		t.Fatal(err)
	}
	items := filepath.Join(dir, "items.yml")
	if err := os.WriteFile(items, []byte("schema_version: 1\nitems: [1]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		cmd        sweepstate.Command
		sentinel   error
	}{
		{"parent is a file", filepath.Join(blocker, "sweep.yml"), sweepstate.LeaseAcquire{Writer: "w", Now: now}, sweepstate.ErrIO},
		{"lock file is a directory", lockedOut, sweepstate.LeaseAcquire{Writer: "w", Now: now}, sweepstate.ErrIO},
		{"items is a list", items, sweepstate.Read{}, sweepstate.ErrNotAMapping},
		{"items is a list, mutating", items, sweepstate.LeaseAcquire{Writer: "w", Now: now}, sweepstate.ErrNotAMapping},
	} {
		res := (&sweepstate.Engine{}).Run(c.path, c.cmd)
		if res.Word != sweepstate.WordError || !errors.Is(res.Err, c.sentinel) {
			t.Errorf("%s: %s (Err %v), want ERROR wrapping %v", c.name, res.Word, res.Err, c.sentinel)
			continue
		}
		if strings.Contains(res.Err.Error(), dir) || !strings.Contains(res.Err.Error(), res.Reason) {
			t.Errorf("%s: Err %q holds the path or not the reason %q", c.name, res.Err, res.Reason)
		}
	}
	// And no answer but ERROR has one.
	state := leased(t)
	for _, cmd := range []sweepstate.Command{sweepstate.Read{}, sweepstate.LeaseAcquire{Writer: "x", Now: now}, sweepstate.LeaseRelease{Writer: "x"},
		sweepstate.CursorAdvance{Source: "s", To: "1", PastItem: "none", Writer: "w", Now: now}} {
		if res := (&sweepstate.Engine{}).Run(state, cmd); res.Err != nil || res.Word == sweepstate.WordError {
			t.Errorf("%T: %s with Err %v", cmd, res.Word, res.Err)
		}
	}
}

// Payload.WriteTo stops at the writer's first error and reports it.
func TestPayloadWriteToReportsTheWritersError(t *testing.T) {
	res := (&sweepstate.Engine{}).Run(leased(t), sweepstate.Read{})
	n, err := res.Payload.WriteTo(failingWriter{})
	if !errors.Is(err, io.ErrShortWrite) || n != 0 {
		t.Errorf("WriteTo into a failing writer: %d, %v", n, err)
	}
	if n, err := (sweepstate.Payload{}).WriteTo(failingWriter{}); n != 0 || err != nil {
		t.Errorf("no payload wrote %d (%v)", n, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

// exactValue draws a JSON value kept exact through the typed API, and the
// value Decode must give back: integers of up to 40 digits and floats as
// json.Number in Python's text (which the engine writes back unchanged),
// any valid strings (keys too), lists and maps nested three deep.
func exactValue(t *rapid.T, depth int) any {
	kinds := 6
	if depth == 0 {
		kinds = 4
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		digits := rapid.StringMatching(`-?[1-9][0-9]{0,39}|0`).Draw(t, "int")
		return json.Number(digits)
	case 1:
		f := rapid.Float64().Filter(func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }).Draw(t, "float")
		return json.Number(pyjson.FormatFloat(f))
	case 2:
		return rapid.String().Draw(t, "string")
	case 3:
		return rapid.SampledFrom([]any{true, false, nil}).Draw(t, "word")
	case 4:
		n := rapid.IntRange(0, 3).Draw(t, "len")
		list := make([]any, n)
		for i := range list {
			list[i] = exactValue(t, depth-1)
		}
		return list
	default:
		return exactMap(t, depth-1)
	}
}

func exactMap(t *rapid.T, depth int) map[string]any {
	m := map[string]any{}
	for range rapid.IntRange(0, 3).Draw(t, "keys") {
		m[rapid.String().Draw(t, "key")] = exactValue(t, depth)
	}
	return m
}

// Any exact value survives a typed round trip: upserted as Go values with
// json.Number, read back with Decode, it is the same value, every number's
// text included (the property behind 2^70 and 1.0 above, over generated
// trees).
func TestTypedRoundTripProperty(t *testing.T) {
	state := leased(t)
	eng := &sweepstate.Engine{}
	id := 0
	rapid.Check(t, func(rt *rapid.T) {
		id++
		fields := map[string]any{"payload": exactMap(rt, 3)}
		key := fmt.Sprintf("gen:%d", id)
		up := sweepstate.UpsertItem{Source: "gen", ID: strconv.Itoa(id), Writer: "w", Now: now, Fields: fields}
		if res := eng.Run(state, up); res.Word != sweepstate.WordOK {
			rt.Fatalf("upsert: %s %s", res.Word, res.Reason)
		}
		var doc struct {
			Items map[string]map[string]any `json:"items"`
		}
		if err := eng.Run(state, sweepstate.Read{}).Decode(&doc); err != nil {
			rt.Fatal(err)
		}
		if got := doc.Items[key]["payload"]; !reflect.DeepEqual(got, fields["payload"]) {
			rt.Fatalf("decoded\n%#v\nwant\n%#v", got, fields["payload"])
		}
	})
}
