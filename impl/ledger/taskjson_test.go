package ledger

import (
	"encoding/json"
	"errors"
	"math"
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
