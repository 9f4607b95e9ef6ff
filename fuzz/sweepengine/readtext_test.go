package sweepengine

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
)

// FuzzReadText puts any bytes in the state file and reads it twice: with
// Engine.Run (the document parsed whole, the general path) and with
// Engine.ReadText (read's fast path, which transcodes this engine's own
// text line by line and hands everything else to the general path).
// Oracle: the same word, the same reason, and the same payload bytes
// (ReadText's text, or its document encoded, against Run's document
// encoded), for any input: every CORRUPT and ERROR reason and every
// decline of the fast path included.
func FuzzReadText(f *testing.F) {
	for _, s := range readTextSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		state := handEdited(t, memdir.TempDir(t), file)
		if err := checkReadText(state); err != nil {
			t.Fatalf("%v\nfile: %q", err, file)
		}
	})
}

// checkReadText compares the two readings of the file at state.
func checkReadText(state string) error {
	var eng sweepstate.Engine
	want := eng.Run(state, sweepstate.Read{})
	got, text := eng.ReadText(state)
	if got.Word != want.Word || got.Reason != want.Reason || (got.Err == nil) != (want.Word != sweepstate.WordError) || (want.Err == nil) != (want.Word != sweepstate.WordError) {
		return fmt.Errorf("ReadText answers %s %q (err %v), Run %s %q (err %v)", got.Word, got.Reason, got.Err, want.Word, want.Reason, want.Err)
	}
	var gotPayload, wantPayload []byte
	if !want.Payload.IsZero() {
		wantPayload, _ = want.Payload.MarshalJSON()
	}
	switch {
	case text.Len() > 0 && !got.Payload.IsZero():
		return fmt.Errorf("ReadText gave both a text and a document")
	case text.Len() > 0:
		var b bytes.Buffer
		text.WriteTo(&b)
		gotPayload = b.Bytes()
	case !got.Payload.IsZero():
		gotPayload, _ = got.Payload.MarshalJSON()
	}
	if !bytes.Equal(gotPayload, wantPayload) {
		return fmt.Errorf("payloads differ:\nReadText: %s\nRun:      %s", gotPayload, wantPayload)
	}
	return nil
}

// readTextBase is the benchmark's file with three items.
func readTextBase() []byte { return benchseed.SweepState(3) }

// editSeeds are the benchmark's file and edits of it that each break one
// rule of a fast path, or of the file.
func editSeeds(tb testing.TB) []string {
	base := string(readTextBase())
	seeds := []string{base}
	edits := [][2]string{
		{"  writer:", "  writer :"},                                        // a bare key with a space
		{"  writer: \"w1\"\n", "  writer: \"w1\"\n  writer: \"w2\"\n"},     // a repeated key
		{"  ttl_minutes: 60\n", "  ttl_minutes: 60\n  a: 1\n"},             // out of the lease order
		{"lease:\n", "lease:\n\n"},                                         // a blank line
		{"lease:\n", "lease:\n# note\n"},                                   // a comment
		{"lease:\n", "lease:\r\n"},                                         // CRLF
		{"lease:\n", "lease:\n# a\rb: 1\n"},                                // a comment with a CR, a line end to Parse
		{"lease:\n", "lease:\n# \xff\n"},                                   // a comment of invalid UTF-8
		{"lease:\n", "lease:\n# caf\u00e9\n"},                              // a comment of valid UTF-8
		{"lease:\n", "lease:\n\t# x\n"},                                    // a tab before a comment
		{"lease:\n", "lease:\n  \t \n"},                                    // a blank line with a tab
		{"lease:\n", "lease:\n   # an odd indent\n"},                       // a comment at any indent
		{"\"w1\"", "\"w1\" # x"},                                           // a '#' after a value
		{"    id: \"", "    # note\n\n    id: \""},                         // a comment and a blank line in an item
		{"    status: \"analyzed\"", "    # note\n    status: \"closed\""}, // a comment where validate's keep looks for the status
		{"items:\n", "items:\n# \xff\n"},                                   // invalid UTF-8 where a split that keeps no item drops the line
		{"items:\n", "items:\n# c\r  \"a\": {\"x\": 1}\n"},                 // a CR there, which hides an item from the split
		{"  \"slack:C42:1719900000.000001\":\n", "  # next\n  \"slack:C42:1719900000.000001\":\n"},
		// A comment and blank lines at odd indents: in an item, after the
		// items line, between items.
		{"    id: \"", "     # odd\n \n    id: \""},
		{"items:\n", "items:\n # c\n"},
		{"  \"slack:C42:1719900000.000001\":\n", "   \n  \"slack:C42:1719900000.000001\":\n"},
		{"\"w1\"", "\"w\r1\""},                       // a raw CR in a string
		{"\"w1\"", "\"w\\r1\\u00e9\\ud83d\\ude00\""}, // escapes
		{"\"w1\"", "\"wé日😀\u007f\u0085\""},           // raw non-ASCII and DEL
		{"\"w1\"", "\"w\xff\""},                      // invalid UTF-8
		{"\"w1\"", "w1"},                             // a plain word
		{"\"w1\"", "yes"},                            // an ambiguous word
		{"\"w1\"", "nan"},                            // the reference's repr
		{"ttl_minutes: 60", "ttl_minutes: -0"},
		{"ttl_minutes: 60", "ttl_minutes: 007"},
		{"ttl_minutes: 60", "ttl_minutes: 123456789012345678901234567890"},
		{"ttl_minutes: 60", "ttl_minutes: 1e400"},
		{"ttl_minutes: 60", "ttl_minutes: 2.5E-8"},
		{"ttl_minutes: 60", "ttl_minutes: -0.0"},
		{"ttl_minutes: 60", "ttl_minutes: 1."},
		{"ttl_minutes: 60", "ttl_minutes: [1, -0, 1.5, NaN, \"x\", null, true, {\"b\": 1, \"a\": 2, \"b\": 3}]"},
		{"ttl_minutes: 60", "ttl_minutes: [1,\r2]"},
		{"ttl_minutes: 60", "ttl_minutes: [\"a\",\"b\"]"},
		{"ttl_minutes: 60", "ttl_minutes: {\"b\": 1, \"a\": 2}"},
		{"ttl_minutes: 60", "ttl_minutes:\t60"},
		{"ttl_minutes: 60", "ttl_minutes:60"},
		{"ttl_minutes: 60", "ttl_minutes: 60 "},
		{"ttl_minutes: 60", "ttl_minutes:"},                         // an empty block at the end of one
		{"lease:\n", "lease:\n x: 1\n"},                             // an odd indent
		{"lease:\n", "lease:\n      deep: 1\n"},                     // deeper than the block opened
		{"  writer: \"w1\"\n", "  writer: \"w1\"\n      deep: 1\n"}, // a stray deeper line
		{"  writer: \"w1\"\n", "  writer: \"w1\"\n \n"},
		{"  writer: \"w1\"\n", "\t writer: \"w1\"\n"},
		{"schema_version: 1\n", ""}, // no version
		{"schema_version: 1\n", "schema_version: 2\n"},
		{"schema_version: 1\n", "\xef\xbb\xbfschema_version: 1\n"},
		{"schema_version: 1\n", "  schema_version: 1\n"},
		{"sources:\n", "sources: 5\nzz:\n"},
		{"items:\n", "items: []\nzz:\n"},
		{"items:\n", "items: {\"a\": 1}\nzz:\n"},
		{"    status:", "    verified_merge_sha: \"abc\"\n    status:"},
		{"    status:", "    \"verified_merge_sha\": 0\n    status:"},
		{"    labels: [\"auth\", \"regression\"]\n", "    labels: [\"auth\", \"regression\"]\n    verified_merge_sha: \"abc\"\n"}, // in key order
		{"    status:", "    \"st\\u0061tus\":"}, // a quoted key with an escape
		{"    status:", "    \"status\":"},       // a quoted bare key
		{"    status:", "    No:"},               // a YAML 1.1 word as a bare key
		{"    status:", "    \"s\" :"},
		{"    status:", "    \"status\"x"},            // a byte other than the colon after a quoted key
		{"  writer: \"w1\"\n", "   writer: \"w1\"\n"}, // three spaces: an odd indent past one level
		{"\"slack:C42\":\n    cursor", "\"slack:C42\":\n    sensitive: true\n    cursor"},
		// Values of an item that the splitting commands leave alone: each
		// is read the same but not written so by the engine.
		{"    labels: [\"auth\", \"regression\"]", "    labels: [\"auth\",\"regression\"]"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: [\"auth\",  \"regression\"]"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: [ \"auth\"]"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: [\"a\\u0075th\"]"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: [\"caf\u00e9\", 1, 0, -0, 1.50, 2.5, null, false, [], {}, NaN, -Infinity]"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: [1e16, 1E16, 0.1]"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: -0"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: 0"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: 007"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: 12345678901234567890123"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: 1.50"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: 1E5"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: 1e+16"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: -0.0"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: 1e400"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: \"caf\\u00e9\""},
		{"    labels: [\"auth\", \"regression\"]", "    labels: \"caf\u00e9\""},
		{"    labels: [\"auth\", \"regression\"]", "    labels: \"\\/\""},
		{"    labels: [\"auth\", \"regression\"]", "    labels: \"\\u007f\u0085\""},
		{"    labels: [\"auth\", \"regression\"]", "    labels: \"\u007f\""},
		{"    labels: [\"auth\", \"regression\"]", "    labels: {\"b\": 1}"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: {}"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: nan"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: plain"},
		{"    labels: [\"auth\", \"regression\"]", "    labels: \"x\"  "},
		{"    labels: [\"auth\", \"regression\"]", "    labels:   \"x\""},
		{"    labels:", "    \"labels\":"},
		{"    labels:", "    \"la\\u0062els\":"},
		{"    labels: [\"auth\", \"regression\"]\n", "    labels:\n      b: 1\n      a: 2\n"},
		{"    labels: [\"auth\", \"regression\"]\n", "    labels:\n      source: 1\n      a: 2\n"},
		{"    labels: [\"auth\", \"regression\"]\n", "    labels:\n      \"true\": 1\n"},
		{"    labels: [\"auth\", \"regression\"]\n", "    labels:\n      true: 1\n"},
		{"    labels: [\"auth\", \"regression\"]\n", "    labels: []\n    status: \"closed\"\n"},
		{"    status: \"analyzed\"", "    status: \"closed\""},
		{"  \"slack:C42:1719900000.000000\":\n", "  \"slack:C42:1719900000.000000\": 5\n  \"slack:C42:1719900000.0000000\":\n"},
		{"  \"slack:C42:1719900000.000000\":\n", "  \"slack:C42:1719900000.000000\": {}\n  \"slack:C42:1719900000.0000000\":\n"},
		{"  \"slack:C42:1719900000.000000\":\n", "  \"slack:C42:1719900000.000000\": \"s\"\n  \"slack:C42:1719900000.0000000\":\n"},
		{"  \"slack:C42:1719900000.000000\":\n", "  \"slack:C42:1719900000.000003\":\n"},
		{"  \"slack:C42:1719900000.000000\":\n", "  \"slack:C42:1719900000.000001\":\n"},
		{"  \"slack:C42:1719900000.000000\":\n", "  slack_C42:\n"},
		{"  \"slack:C42:1719900000.000000\":\n", "  \"0\":\n"},

		{"\"slack:C42\":\n    cursor", "\"slack:C42\":\n    cursor: 1\n    cursor"},
		// Lines a run of usual lines (ReadJSON's loop over an item's
		// lines and its siblings) must leave to the line reader.
		{"  \"slack:C42:1719900000.000000\":\n", "  \"slack:C42:1719900000.00000\":\n  \"slack:C42:1719900000.000000\":\n"},   // an empty item, then its sibling
		{"  \"slack:C42:1719900000.000001\":\n", "  \"slack:C42:1719900000.0000005\":\n  \"slack:C42:1719900000.000001\":\n"}, // the same after an item
		{"  \"slack:C42:1719900000.000001\":\n", "  \"slack:C42:1719900000.000001\":\t"},                                      // a sibling's colon, then not the line's end
		{"    labels: [\"auth\", \"regression\"]\n", "    labels: [\"auth\", \"regression\"]\n    \"zz\\: \"x\"\n"},           // a quoted key's escape, then a colon
		// The third item read by the keys of the second (the shape run
		// expects), where it has others.
		{"    id: \"1719900000.000002\"\n", ""},                                                                // a key fewer
		{"    id: \"1719900000.000002\"\n", "    ix: \"1719900000.000002\"\n"},                                 // another key of the same length
		{"    id: \"1719900000.000002\"\n", "    idx: \"1719900000.000002\"\n"},                                // one the expected key begins
		{"    id: \"1719900000.000002\"\n", "    idx \"1719900000.000002\"\n"},                                 // the expected key, then not its colon
		{"    id: \"1719900000.000002\"\n", "    \"id\": \"1719900000.000002\"\n"},                             // the expected key quoted
		{"    url: \"https://chat.example.com/archives/C42/p1719900000000102\"\n", "    \"body\": \"x\"\n"},    // a quoted key, then the key it repeats where expected
		{"    url: \"https://chat.example.com/archives/C42/p1719900000000102\"\n", "    verified_at: \"x\"\n"}, // a key, then one expected but out of order after it
		{"    id: \"1719900000.000002\"\n", "    i\\: \"1719900000.000002\"\n"},                                // a key of the same length out of the bare pattern
		{"    id: \"1719900000.000002\"\n", "      id: \"1719900000.000002\"\n"},                               // the expected key on a stray deeper line
		{"    id: \"1719900000.000002\"\n", "  xxid: \"1719900000.000002\"\n"},                                 // a shallower line whose key ends in the expected one where it stands
		{"    id: \"1719900000.000002\"\n", "   xid: \"1719900000.000002\"\n"},                                 // the same at an odd indent
		{"    status: \"analyzed\"\n    title: \"Item 2", "    source: \"analyzed\"\n    title: \"Item 2"},     // a key of the same length repeated
		{"    id: \"1719900000.000002\"\n", "    id:\"1719900000.000002\"\n"},                                  // the expected key, then no space
		{"    id: \"1719900000.000002\"\n", "    id: \"1719900000.000002\" \n"},                                // a string, then a space
		{"    id: \"1719900000.000002\"\n", "    id: \"1719900000.000002\", \"x\"\n"},                          // a string, then another
		{"    id: \"1719900000.000002\"\n", "    id: \"1719900000.000002\"\"\n"},                               // a string, then a quote
		{"    id: \"", "    id:x\""},              // the key's colon, then a byte and a string
		{"\"\n    labels: [", "\"x    labels: ["}, // a string, then a byte and the next line
	}
	for _, e := range edits {
		if !strings.Contains(base, e[0]) {
			tb.Fatalf("seed edit %q does not apply", e[0])
		}
		seeds = append(seeds, strings.Replace(base, e[0], e[1], 1))
		// An edit of an item's line made to the last item too, whose
		// lines read's runLines expects by the keys of the item before
		// (shapedLines), where the first item's are read one by one.
		if last := strings.LastIndex(base, e[0]); last > strings.Index(base, "\nitems:\n") && last != strings.Index(base, e[0]) {
			seeds = append(seeds, base[:last]+e[1]+base[last+len(e[0]):])
		}
	}
	// The shape run expects from the second item ("b") is not taken
	// from the third, whose first key is quoted: the fourth's repeated
	// key is read, not expected.
	seeds = append(seeds, "schema_version: 1\nsources: {}\nitems:\n  \"a\":\n    x: \"1\"\n  \"b\":\n    s: \"1\"\n    u: \"1\"\n"+
		"  \"c\":\n    \"r\": \"1\"\n    s: \"1\"\n  \"d\":\n    s: \"1\"\n    s: \"1\"\nlast_run: {}\n")
	// An eight-byte key the second item ends with, and the same eight
	// bytes in the third not followed by the colon.
	labels := "    labels: [\"auth\", \"regression\"]\n"
	eight := strings.Replace(base, "000001\"\n"+labels, "000001\"\n"+labels+"    zz_label: \"x\"\n", 1)
	seeds = append(seeds, strings.Replace(eight, "000002\"\n"+labels, "000002\"\n"+labels+"    zz_label; \"x\"\n", 1))
	seeds = append(seeds, strings.TrimSuffix(base, labels)+"    labels: \"x\" zz: 1\n") // a string, then more of its line
	seeds = append(seeds, base[:len(base)-1], base+"zz_custom:\n  b: 1\n  a: \"x\"\nzz_after: {}\n", base+"last_run: {}\n",
		"", " \n", "schema_version: 1\nsources: {}\nitems: {}\n", "schema_version: 1\nitems: {}\nsources: {}\n",
		"# edited by hand\n"+base, "\n"+base+"# end\n", base+"zz:\n# c\n", "# a\n# b\n", "# a\n\n")
	return seeds
}

// fixtureSeeds are the last state of every recorded fixture and the files
// the fixtures write by hand (the Python engine's among them).
func fixtureSeeds(tb testing.TB) []string {
	var seeds []string
	dir := testfixtures.Dir(tb, "sweep")
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		var fx struct {
			Steps []struct {
				StateAfter *string `json:"state_after"`
				ContentB64 *string `json:"content_b64"`
			} `json:"steps"`
		}
		b, err := os.ReadFile(p)
		if err != nil || json.Unmarshal(b, &fx) != nil {
			return err
		}
		last := ""
		for _, s := range fx.Steps {
			if s.StateAfter != nil {
				last = *s.StateAfter
			}
			if s.ContentB64 != nil {
				if raw, err := base64.StdEncoding.DecodeString(*s.ContentB64); err == nil {
					seeds = append(seeds, string(raw))
				}
			}
		}
		seeds = append(seeds, last)
		return nil
	})
	slices.Sort(seeds)
	return slices.Compact(seeds)
}

// readTextSeeds are editSeeds and fixtureSeeds.
func readTextSeeds(tb testing.TB) []string {
	return append(editSeeds(tb), fixtureSeeds(tb)...)
}
