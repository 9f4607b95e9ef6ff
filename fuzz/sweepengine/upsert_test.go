package sweepengine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// heldState: w1 holds the lease at fileNow; source "sec" is sensitive.
const heldState = `schema_version: 1
lease:
  writer: "w1"
  timestamp: "2026-07-02T12:00:00Z"
  ttl_minutes: 60
sources:
  sec:
    sensitive: true
    cursor: "3"
items:
  "gh:9":
    source: "gh"
    status: "ingested"
    id: "9"
    title: "kept"
`

// FuzzUpsertJSON merges any --json text into an item of a valid file
// whose lease the caller holds. Oracles: the answer and the file equal the
// model's; an ERROR leaves the file byte for byte; a text that Go's
// encoding/json (a decoder independent of the engine's) reads as an object
// within the contract's limits must be merged: every key kept, source and
// id set; and for a sensitive item (flag in the item or on the source) no
// body or quote text reaches the file bytes.
func FuzzUpsertJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"status": "closed", "fix_ref": "PR#1", "verified_at": "x", "verified_revision_id": "r"}`,
		`{"sensitive": true, "body": "SECRET-BODY-1", "quote": "SECRET-QUOTE-1", "title": "t"}`,
		`{"body": "SECRET-BODY-2"}`, `{"sensitive": "true", "body": "not-secret-at-all"}`,
		`{"source": "other", "id": "x", "unknown": {"k": [1, 2.5, null]}, "a": 1, "a": 2}`,
		`[1]`, `5`, `"s"`, `null`, `{"x": NaN}`, `{"x": 1e999}`, `{"x": "\ud800"}`, `{"x": "\ud83d\ude00"}`,
		`{"a": 1,}`, ` {"n": 123456789012345678901234567890} `, `{"f": -0.0, "g": 1E+2}`, "{\"\u2028\": \"\x7f\"}",
		"{\"a\": \"\xff\"}", "", `{"sensitive": 1, "body": "SECRET-BODY-3"}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, onSensitiveSource bool) {
		dir := t.TempDir()
		state := filepath.Join(dir, "state.yml")
		mustWrite(t, state, []byte(heldState))
		src := "gh"
		if onSensitiveSource {
			src = "sec"
		}
		a := argv("upsert-item", state, flag("source", src), flag("id", "9"), flag("json", text), flag("writer", "w1"), flag("now", fileNow))
		rc, stdout, stderr := runCLI(a)
		after, _ := os.ReadFile(state)
		if !utf8.ValidString(text) {
			if rc != 2 || stdout != "" || string(after) != heldState {
				t.Fatalf("--json %q (not UTF-8): exit %d stdout %q; want misuse and the file kept", text, rc, stdout)
			}
			return
		}
		res, next := sweep.Apply(stateOf([]byte(heldState), true), sweep.UpsertItem{Source: src, ID: "9", Writer: "w1", Now: fileNow, Item: decodeJSON(text)})
		if rc != 0 || stdout != answer(res) {
			t.Fatalf("--json %q: exit %d stdout %q stderr %q; model %q", text, rc, stdout, stderr, answer(res))
		}
		if !res.Wrote {
			if res.Word != sweep.Error || string(after) != heldState {
				t.Fatalf("--json %q: %s and the file now %q", text, res.Word, after)
			}
		} else if err := checkFile(state, next, nil); err != nil {
			t.Fatalf("--json %q: %v", text, err)
		}
		obj, _ := independentObject(text)
		if err := judgeAcceptance(text, stdout); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(stdout, "OK\n") || obj == nil {
			return
		}
		doc, err := yamlsubset.Parse(after)
		if err != nil {
			t.Fatalf("--json %q: written file does not parse: %v", text, err)
		}
		items, _ := doc.Get("items")
		itemV, _ := items.(*value.Map).Get(src + ":9")
		item, _ := itemV.(*value.Map)
		if item == nil {
			t.Fatalf("--json %q: no item %s:9 in\n%s", text, src, after)
		}
		if s, _ := item.Get("source"); s != src {
			t.Fatalf("--json %q: item source %v", text, s)
		}
		if s, _ := item.Get("id"); s != "9" {
			t.Fatalf("--json %q: item id %v", text, s)
		}
		sensitive := onSensitiveSource || obj["sensitive"] == true
		if v, ok := item.Get("sensitive"); ok && v == true {
			sensitive = true
		}
		for k := range obj {
			if sensitive && (k == "body" || k == "quote") {
				continue
			}
			if !item.Has(k) {
				t.Fatalf("--json %q: key %q lost:\n%s", text, k, after)
			}
		}
		if !sensitive {
			return
		}
		for _, k := range []string{"body", "quote"} {
			if item.Has(k) {
				t.Fatalf("--json %q: sensitive item keeps %s:\n%s", text, k, after)
			}
			s, _ := obj[k].(string)
			if plainSecret.MatchString(s) && strings.Count(text, s) == 1 && !strings.Contains(heldState, s) &&
				bytes.Contains(after, []byte(s)) {
				t.Fatalf("--json %q: sensitive %s text %q reached the disk:\n%s", text, k, s, after)
			}
		}
	})
}

// plainSecret: a text long enough to be found by grep without false hits
// and written unescaped if it were written at all.
var plainSecret = regexp.MustCompile(`^[A-Za-z0-9_.-]{6,}$`)

// surrogateEscape finds an escape that may leave a lone surrogate, which
// encoding/json replaces silently while the contract refuses it.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// independentObject decodes text with encoding/json and reports the object
// when it is one the contract must accept: no surrogate escapes, no
// number that overflows a float or has more than 4300 digits, nesting
// below 990.
func independentObject(text string) (map[string]any, bool) {
	// json.Valid judges the whole text (a decoder stops after the first
	// value and would let "{}}" through).
	if !json.Valid([]byte(text)) || surrogateEscape.MatchString(text) || strings.Count(text, "[")+strings.Count(text, "{") > 900 {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	obj, ok := v.(map[string]any)
	if !ok || !withinLimits(obj) {
		return nil, false
	}
	return obj, true
}

func withinLimits(v any) bool {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			return err == nil && !math.IsInf(f, 0)
		}
		return len(strings.TrimPrefix(s, "-")) <= 4300
	case map[string]any:
		for _, e := range x {
			if !withinLimits(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !withinLimits(e) {
				return false
			}
		}
	}
	return true
}

// judgeAcceptance holds the engine's answer to a --json text against
// encoding/json's reading of it, both ways: an object within the limits is
// merged, and a merged text is a JSON object. (What Python's json.loads
// accepts beyond encoding/json, NaN and Infinity, the contract refuses, D5.)
func judgeAcceptance(text, stdout string) error {
	merged := strings.HasPrefix(stdout, "OK\n")
	if _, isObject := independentObject(text); isObject && !merged {
		return fmt.Errorf("--json %q: an object within the limits was refused: %q", text, stdout)
	}
	if merged && (!json.Valid([]byte(text)) || !strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "{")) {
		return fmt.Errorf("--json %q: not a JSON object, merged: %q", text, stdout)
	}
	return nil
}
