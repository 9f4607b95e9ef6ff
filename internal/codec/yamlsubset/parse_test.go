package yamlsubset_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// TestParseAccepts: each document reads to the given value, shown as
// json.dumps text (file order, exact types).
func TestParseAccepts(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"scalars", "a: null\nb: true\nc: false\nd: -12\ne: 1.5e3\nf: \"x\"\n",
			`{"a": null, "b": true, "c": false, "d": -12, "e": 1500.0, "f": "x"}`},
		{"big integer exact", "big: 123456789012345678901234567890\n", `{"big": 123456789012345678901234567890}`},
		{"negative zero integer", "z: -0\n", `{"z": 0}`},
		{"inline JSON", "l: [1, {\"b\": 2, \"a\": [\"x\"]}, {}]\nm: {}\n", `{"l": [1, {"b": 2, "a": ["x"]}, {}], "m": {}}`},
		{"nested block", "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", `{"a": {"b": {"c": 1}, "d": 2}, "e": 3}`},
		{"empty block is an empty map", "a:\nb: 1\n", `{"a": {}, "b": 1}`},
		{"empty block at end", "a: 1\nb:\n", `{"a": 1, "b": {}}`},
		{"quoted keys", "\"a:b\": 1\n\"\": 2\n\"\\u00e9\\n\": 3\n\"q\": 4\n", `{"a:b": 1, "": 2, "\u00e9\n": 3, "q": 4}`},
		{"bare key keeps trailing space", "key : v\n", `{"key ": "v"}`},
		{"comments and blank lines", "# c\n\na: 1\n   # indented comment\n \t \nb: 2\n", `{"a": 1, "b": 2}`},
		{"CRLF", "a:\r\n  b: 1\r\nc: \"x\"\r\n", `{"a": {"b": 1}, "c": "x"}`},
		{"CR only", "a:\r  b: 1\rc: 2", `{"a": {"b": 1}, "c": 2}`},
		{"no final newline", "a: 1", `{"a": 1}`},
		{"duplicate key: later wins, first position", "a: 1\nb: 2\na: 3\n", `{"a": 3, "b": 2}`},
		{"duplicate block key replaces", "a:\n  x: 1\nb: 0\na:\n  w: 2\n", `{"a": {"w": 2}, "b": 0}`},
		// More keys than value.Map searches linearly: the map is built with
		// its index at once.
		{"duplicate key in a large map", "m:\n  k: 0\n" + largeBlock + "  k: 9\n",
			`{"m": {"k": 9, ` + largeJSON + `}}`},
		{"trailing spaces and tab after value", "a: 1  \t\nb:   \"x\"\n", `{"a": 1, "b": "x"}`},
		{"tab after colon", "a:\t1\n", `{"a": 1}`},
		{"unquoted word kept as string", "a: weird_status\nb: /path/x\nc: Hello world, [ok]\nd: nan_x\ne: nan2\n",
			`{"a": "weird_status", "b": "/path/x", "c": "Hello world, [ok]", "d": "nan_x", "e": "nan2"}`},
		{"raw D6 characters inside strings", "a: \"\u007f\u0085\u2028\u2029\ufffe\"\n", `{"a": "\u007f\u0085\u2028\u2029\ufffe"}`},
		{"indented top level", "  a: 1\n  b:\n    c: 2\n", `{"a": 1, "b": {"c": 2}}`},
		{"line deeper than its parent dropped", "a: 1\n    b: 2\nc: 3\n", `{"a": 1, "c": 3}`},
		{"dropped line is not inspected", "a: 1\n    no colon here\nc: 3\n", `{"a": 1, "c": 3}`},
		{"dropped block with children", "a: 1\n  b:\n    c: 1\nd: 2\n", `{"a": 1, "d": 2}`},
		{"line between two levels dropped", "a:\n    b: 1\n  c: 2\nd: 3\n", `{"a": {"b": 1}, "d": 3}`},
		// Divergence D12: the reference stops at the shallower line and
		// reads {"a": 1}.
		{"line shallower than first dropped", "  a: 1\nb: 2\n  c: 3\n", `{"a": 1, "c": 3}`},
		{"children of a shallower KEY: read where they stand", "  a: 1\nb:\n  c: 3\n    d: 4\n", `{"a": 1, "c": 3}`},
		{"deep stray after nested", "a:\n  b: 1\n      x: 9\n  c: 2\n", `{"a": {"b": 1, "c": 2}}`},
	}
	for _, c := range cases {
		doc, err := yamlsubset.Parse([]byte(c.in))
		if err != nil {
			t.Errorf("%s: Parse: %v", c.name, err)
			continue
		}
		if got := string(pyjson.Encode(doc)); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, got, c.want)
		}
	}
}

// largeBlock is 20 block entries at depth 1 (k00 to k19), largeJSON the
// same as JSON members.
var largeBlock, largeJSON = func() (string, string) {
	var b, j strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "  k%02d: %d\n", i, i)
		if i > 0 {
			j.WriteString(", ")
		}
		fmt.Fprintf(&j, `"k%02d": %d`, i, i)
	}
	return b.String(), j.String()
}()

// TestParseRefuses: each document is CORRUPT.
func TestParseRefuses(t *testing.T) {
	cases := []struct{ name, in string }{
		{"line without colon", "schema_version: 1\nthis line has no colon\n"},
		{"byte-order mark", "\ufeffa: 1\n"},
		{"comments only", "# just a note\n\n  # another\n"},
		{"whitespace only", "  \n\n"},
		{"empty", ""},
		{"tab indentation", "a:\n\tb: 1\n"},
		{"tab after spaces", "a:\n  \tb: 1\n"},
		{"raw CR inside quoted string", "a: \"x\ry\"\n"},
		{"raw CR inside quoted key", "\"x\ry\": 1\n"},
		{"raw tab inside quoted string", "a: \"x\ty\"\n"},
		{"text after JSON value", "a: \"x\" y\n"},
		{"comment after value", "a: 1 # note\n"},
		{"bad JSON", "a: [1, 2\n"},
		{"bad JSON object", "a: {\"x\" 1}\n"},
		{"unterminated quoted key", "\"a: 1\n"},
		{"quoted key without colon", "\"a\" 1\n"},
		// The reference answers CORRUPT for a space between a quoted key
		// and its colon (spec 15.2.2); a bare key keeps its space instead.
		{"space before quoted key colon", "\"k\" : \"v\"\n"},
		{"spaces before nested quoted key colon", "a:\n  \"k\"  :\n    b: 1\n"},
		{"tab before quoted key colon", "\"k\"\t: 1\n"},
		{"no space after colon", "a:1\n"},
		{"no space after quoted key colon", "\"a\":1\n"},
		{"top level list", "- a\n- b\n"},
		{"top level JSON", "[1, {\"a\": 2}]\n"},
		{"NaN", "a: NaN\n"},
		{"Infinity", "a: Infinity\n"},
		{"-Infinity", "a: -Infinity\n"},
		{"overflowing float", "a: 1e400\n"},
		{"too many digits", "a: " + strings.Repeat("1", pyjson.MaxIntDigits+1) + "\n"},
		{"invalid UTF-8", "a: \"\xff\"\n"},
		{"lone surrogate escape", "a: \"\\ud800\"\n"},
		{"ambiguous bare key true with a space", "true : 1\n"},
		{"no-break space after a word", "a: x\u00a0\n"},
		{"ideographic space after null", "a: null\u3000\n"},
		{"no-break space after a JSON value", "a: \"x\"\u00a0\n"},
		{"no-break space after key colon", "a:\u00a0\n"},
		{"no-break space ending a bare key", "a\u00a0: 1\n"},
		{"a line holding only a no-break space", "a: 1\n\u00a0\n"},
		{"NaN inside an inline object", "a: {\"v\": NaN}\n"},
		{"overflowing float in a list", "a: [1e400]\n"},
		{"NaN spelled otherwise in a list", "a: [nan]\n"},
		{"ambiguous bare key number", "123: 1\n"},
		{"ambiguous bare key empty", ": 1\n"},
		{"bare key with comment marker", "a #b: 1\n"},
		{"ambiguous bare key tilde", "~: 1\n"},
	}
	for _, c := range cases {
		if _, err := yamlsubset.Parse([]byte(c.in)); !errors.Is(err, yamlsubset.ErrCorrupt) {
			t.Errorf("%s: Parse(%q) = %v, want ErrCorrupt", c.name, c.in, err)
		}
	}
}

// TestUnquotedWordRule is the table of the plain-scalar rule (see
// isPlainValue and isPlainKey): which unquoted values are kept as strings and which make
// the file CORRUPT because YAML readers would disagree about them.
func TestUnquotedWordRule(t *testing.T) {
	accepted := []string{
		"abc", "weird_status", "_x", "/slash/path", "Hello world", "a-b.c", "x:y", "a,b", "a [b]", "a{b}",
		"not_first_é", "abc#def", "Yesterday", "nope", "only", "offline", "nan_x", "x\"y", "a'b", "trueish", "NULLs",
	}
	ambiguous := []string{
		"yes", "Yes", "YES", "yEs", "y", "Y", "n", "N", "no", "NO", "nO", "on", "On", "oN", "off", "OFF", "oFF",
		"True", "TRUE", "tRUE", "False", "FALSE", "Null", "NULL", "nULL", "~", "NaN", "NAN", "Nan", "Inf", "INF", "-Inf", "-nan", "+inf", "infinity", "Infinity", "-Infinity",
		"0x10", "0o17", ".5", "1_000", "+1", "-", "- a", "'x'", "2026-07-02", "12:30", "1.", "01", ".inf", "-.inf", ".nan",
		"a: b", "a:", "a #b", "&anchor", "*alias", "!tag x", "|", ">", "%x", "@x", "`x`", "? x", "é", "\u00a0x", "<<", "=",
		"a\tb", "a\u0085b", "a\u2028b", "a\u007fb", "a\ufeffb", "#x", "[a", "{a",
	}
	for _, w := range accepted {
		doc, err := yamlsubset.Parse([]byte("k: " + w + "\n"))
		if err != nil {
			t.Errorf("%q refused: %v", w, err)
			continue
		}
		if v, _ := doc.Get("k"); v != w {
			t.Errorf("%q read as %#v", w, v)
		}
	}
	for _, w := range ambiguous {
		if _, err := yamlsubset.Parse([]byte("k: " + w + "\n")); !errors.Is(err, yamlsubset.ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", w, err)
		}
	}
	// The same rule guards bare keys.
	for _, w := range []string{"yes ", "Null ", "true  ", "Y ", "~", "1", "-x", "é", ".5", "a #b"} {
		if _, err := yamlsubset.Parse([]byte(w + ": 1\n")); !errors.Is(err, yamlsubset.ErrCorrupt) {
			t.Errorf("bare key %q: %v, want ErrCorrupt", w, err)
		}
	}
	// Python's repr of the non-finite floats, as the reference writes them
	// bare, reads back as that string (its reader's reading).
	for _, w := range []string{"nan", "inf", "-inf"} {
		doc, err := yamlsubset.Parse([]byte("k: " + w + "\n"))
		if v, _ := doc.Get("k"); err != nil || v != w {
			t.Errorf("repr word %q: %#v, %v", w, v, err)
		}
	}
	// Keys the reference writer puts bare (its bare-key pattern, the YAML
	// 1.1 words included) read back as themselves.
	for _, w := range []string{"tRUE", "nULL", "yES", "nan", "Infinity", "inf", "y", "Y", "yes", "No", "OFF", "on", "True", "false", "null", "Null", "NULL"} {
		doc, err := yamlsubset.Parse([]byte(w + ": 1\n"))
		if err != nil || !doc.Has(w) {
			t.Errorf("bare key %q: %v", w, err)
		}
	}
}

// TestParseCROnlyLargeFile: CR-only line ends over 2 MB parse (the line
// splitter once searched for '\n' from every line start, which made such a
// file quadratic; this test would then run for minutes).
func TestParseCROnlyLargeFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("schema_version: 1\ritems:\r")
	for i := range 100000 {
		fmt.Fprintf(&b, "  \"s:%d\": \"x\"\r", i)
	}
	doc, err := yamlsubset.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	items, _ := doc.Get("items")
	if n := items.(*value.Map).Len(); n != 100000 {
		t.Fatalf("%d items", n)
	}
}
