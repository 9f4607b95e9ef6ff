package ledger

import (
	"encoding/json"
	"strings"
	"testing"
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
