package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// json.Marshal of a Task, by value, by pointer and inside a slice or a
// map, writes has_payload_hash in place of the payload fingerprint and
// never the fingerprint itself (the privacy contract keeps it out of every
// output), and writes what Task.MarshalJSON writes.
func TestTaskJSONNeverHoldsThePayloadHash(t *testing.T) {
	l, _, _ := openTest(t)
	hash := strings.Repeat("c0ffee", 10) + "abcd"
	with, err := l.Create(CreateParams{PayloadHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	if with.PayloadHash == nil || *with.PayloadHash != hash {
		t.Fatalf("the stored task lost its hash: %v", with.PayloadHash)
	}
	without, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	own, err := with.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"value":   with,
		"pointer": &with,
		"slice":   []Task{without, with},
		"map":     map[string]Task{"t": with},
	} {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		text := string(js)
		for _, held := range []string{hash, "c0ffee", "payload_hash\""} {
			if strings.Contains(strings.ReplaceAll(text, "has_payload_hash", ""), held) {
				t.Errorf("%s: %s holds %q", name, text, held)
			}
		}
		if !strings.Contains(text, `"has_payload_hash":true`) {
			t.Errorf("%s: %s lacks has_payload_hash true", name, text)
		}
		if name == "value" && text != string(own) {
			t.Errorf("json.Marshal %s, MarshalJSON %s", text, own)
		}
	}
	if js, _ := json.Marshal(without); !strings.Contains(string(js), `"has_payload_hash":false`) {
		t.Errorf("a task without a hash: %s", js)
	}
}

// A timeout is a Duration in Go and float seconds as stored and printed:
// a Duration reaches the row as its nearest float, the row's float comes
// back as its nearest Duration (the longest one past a Duration's reach),
// and the JSON writes what is stored, byte for byte, unless the field was
// changed since it was read.
func TestTimeoutIsADurationAndPrintsAsStored(t *testing.T) {
	l, _, _ := openTest(t)
	timeoutOf := func(task Task) string {
		t.Helper()
		js, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Timeout json.RawMessage `json:"timeout_seconds"`
		}
		if err := json.Unmarshal(js, &v); err != nil {
			t.Fatal(err)
		}
		return string(v.Timeout)
	}
	for _, c := range []struct {
		params      CreateParams
		wantTimeout time.Duration
		wantJSON    string
	}{
		{CreateParams{Timeout: new(15 * time.Minute)}, 15 * time.Minute, "900.0"},
		{CreateParams{Timeout: new(time.Duration(1680280718))}, 1680280718, "1.680280718"},
		{CreateParams{Timeout: new(time.Duration(0))}, 0, "0.0"},
		{timeoutSeconds(CreateParams{}, 1e16), math.MaxInt64, "1e+16"},
		{timeoutSeconds(CreateParams{}, 0.1), 100 * time.Millisecond, "0.1"},
		{CreateParams{}, -1, "null"},
	} {
		task, err := l.Create(c.params)
		if err != nil {
			t.Fatal(err)
		}
		if (task.Timeout == nil) != (c.wantTimeout == -1) || task.Timeout != nil && *task.Timeout != c.wantTimeout {
			t.Errorf("timeout %v read back as %v, want %v", c.wantJSON, task.Timeout, c.wantTimeout)
		}
		if got := timeoutOf(task); got != c.wantJSON {
			t.Errorf("timeout %v printed as %s, want %s", c.wantTimeout, got, c.wantJSON)
		}
		if got, _ := l.Get(task.ID); timeoutOf(got) != c.wantJSON {
			t.Errorf("timeout %v read and printed as %s, want %s", c.wantTimeout, timeoutOf(got), c.wantJSON)
		}
	}
	changed, _ := l.Create(timeoutSeconds(CreateParams{}, 1e16))
	changed.Timeout = new(2 * time.Second)
	if got := timeoutOf(changed); got != "2.0" {
		t.Errorf("a changed timeout printed as %s, want 2.0", got)
	}
	changed.Timeout = new(-time.Second)
	if _, err := json.Marshal(changed); err == nil {
		t.Error("a negative timeout marshalled")
	}
	if _, err := l.Create(CreateParams{Timeout: new(-time.Nanosecond)}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a negative timeout: %v, want ErrInvalidInput", err)
	}
}

// cliDecimal is t as the command line's test clock would be given it:
// Unix seconds in decimal, to the nanosecond.
func cliDecimal(t time.Time) string {
	n := t.UnixNano()
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	return fmt.Sprintf("%s%d.%09d", sign, n/1e9, n%1e9)
}

// Instants are Times in Go and float Unix seconds as stored and printed.
// A Time from the clock is stored as the very float the command line
// stores when its test clock reads the same instant in decimal (the
// nearest one: a float64 of the nanoseconds divided by 1e9 rounds twice
// and lands a float off for 1304066831.170625356); a stored float comes
// back as its nearest Time (the nearest limit past a Time's reach), and
// the JSON of a task and of its events writes what is stored, byte for
// byte, unless the field was changed since it was read.
func TestInstantsAreTimesAndPrintAsStored(t *testing.T) {
	dir := privateDir(t)
	open := func(name string, opts Options) *Ledger {
		t.Helper()
		opts.AllowExternalACL = onWindows
		l, err := Open(filepath.Join(dir, name), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	printed := func(v any, key string) string {
		t.Helper()
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		return string(m[key])
	}

	var now time.Time
	api := open("api.sqlite", Options{AllowExternalACL: onWindows, Clock: func() time.Time { return now }})
	for _, at := range []time.Time{
		time.Unix(1304066831, 170625356),
		time.Unix(9727887, 427131847),
		time.Unix(1767225600, 0),
		time.Unix(-31536000, 1),
		time.Unix(1700000000, 999999999).In(time.FixedZone("east", 5*3600)),
	} {
		now = at
		decimal := cliDecimal(at)
		seconds, err := strconv.ParseFloat(decimal, 64)
		if err != nil {
			t.Fatal(err)
		}
		cliOpts := Options{AllowExternalACL: onWindows}
		cliOpts.SetClockSeconds(func() float64 { return seconds })
		cli := open(decimal+".sqlite", cliOpts)
		viaAPI, err := api.Create(CreateParams{})
		if err != nil {
			t.Fatal(err)
		}
		viaCLI, err := cli.Create(CreateParams{})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := api.Get(viaAPI.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := row(stored).CreatedAt; math.Float64bits(got) != math.Float64bits(seconds) {
			t.Errorf("%s: the Time was stored as %v, the command line stores %v", decimal, got, seconds)
		}
		if a, c := printed(stored, "created_at"), printed(viaCLI, "created_at"); a != c {
			t.Errorf("%s: printed as %s, the command line's as %s", decimal, a, c)
		}
		// Read back: the float's nearest Time, in UTC, which is the
		// instant given to within half the gap between floats there
		// (119 ns in 2011).
		halfGap := time.Duration(math.Ceil((math.Nextafter(seconds, math.Inf(1)) - seconds) / 2 * 1e9))
		if d := stored.CreatedAt.Sub(at); d < -halfGap || d > halfGap || stored.CreatedAt.Location() != time.UTC {
			t.Errorf("%s: read back as %v, want %v to within %v, in UTC", decimal, stored.CreatedAt, at, halfGap)
		}
	}

	// Floats no Time holds: finer than a nanosecond, and past ±2^62 s.
	for _, c := range []struct {
		seconds float64
		want    time.Time
		printed string
	}{
		{1000.0000000001, time.Unix(1000, 0), "1000.0000000001"},
		{1e-10, time.Unix(0, 0), "1e-10"},
		{1e300, latestInstant, "1e+300"},
		{-1e300, earliestInstant, "-1e+300"},
	} {
		opts := Options{AllowExternalACL: onWindows}
		opts.SetClockSeconds(func() float64 { return c.seconds })
		l := open(c.printed+".sqlite", opts)
		created, err := l.Create(CreateParams{})
		if err != nil {
			t.Fatal(err)
		}
		read, err := l.Get(created.ID)
		if err != nil {
			t.Fatal(err)
		}
		history, err := l.History(created.ID)
		if err != nil || len(history) != 1 {
			t.Fatalf("%s: history %v, %v", c.printed, history, err)
		}
		for name, task := range map[string]Task{"created": created, "read": read} {
			if !task.CreatedAt.Equal(c.want) || !task.UpdatedAt.Equal(c.want) || !task.DeliveryUpdatedAt.Equal(c.want) {
				t.Errorf("%s %s: times %v, %v, %v, want %v", c.printed, name, task.CreatedAt, task.UpdatedAt, task.DeliveryUpdatedAt, c.want)
			}
			for _, key := range []string{"created_at", "updated_at", "delivery_updated_at"} {
				if got := printed(task, key); got != c.printed {
					t.Errorf("%s %s: %s printed as %s", c.printed, name, key, got)
				}
			}
		}
		if !history[0].OccurredAt.Equal(c.want) || printed(history[0], "occurred_at") != c.printed {
			t.Errorf("%s: the event at %v printed as %s", c.printed, history[0].OccurredAt, printed(history[0], "occurred_at"))
		}
		// A changed field writes the float nearest to its new value.
		read.CreatedAt = time.Unix(5, 500_000_000)
		history[0].OccurredAt = time.Unix(7, 0)
		if got, ev := printed(read, "created_at"), printed(history[0], "occurred_at"); got != "5.5" || ev != "7.0" {
			t.Errorf("%s: changed times printed as %s and %s, want 5.5 and 7.0", c.printed, got, ev)
		}
	}

	// The cutoff of a prune is required.
	if _, err := api.Prune(PruneOptions{DryRun: true}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a prune without a cutoff: %v, want ErrInvalidInput", err)
	}
}
