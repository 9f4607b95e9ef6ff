package sweepstate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/model/value"
)

// Keys and sources of the generated files: few, so that the sides often
// hold the same item, the same change, or a change back to the base's.
var (
	fastKeys    = []string{"gh:1", "gh:2", "gh:x:3", "chat:4", "chat:5", "mail:6", "7", "gh:8"}
	fastSources = []string{"gh", "gh:x", "chat", "mail"}
)

// drawFastItem is an item from a small pool: the fields redaction and the
// evidence check read, in every form, and the reference writer's.
func drawFastItem(t *rapid.T, label string) value.Value {
	if rapid.IntRange(0, 15).Draw(t, label+" scalar?") == 0 {
		return value.Int(int64(rapid.IntRange(0, 2).Draw(t, label+" scalar")))
	}
	it := value.NewMap()
	maybe := func(field string, values ...value.Value) {
		if i := rapid.IntRange(0, len(values)).Draw(t, label+" "+field); i < len(values) {
			it.Set(field, values[i])
		}
	}
	maybe("source", "gh", "chat", "mail", "gh:x")
	maybe("status", "closed", "analyzed", "analyzed", "fix_pending")
	maybe("sensitive", true, false, false)
	maybe("title", "t1", "t2")
	maybe("body", "b1", "b2")
	maybe("quote", "q1")
	for _, f := range sweepcore.EvidenceFields {
		maybe(f, "e1", "e1", "e1", "e1", "", value.Int(1), value.Int(0), true)
	}
	maybe("N", value.Int(1))
	maybe("ratio", "nan")
	maybe("labels", []value.Value{"x", "y"}, []value.Value{})
	nested := value.NewMap()
	nested.Set("body", "deep")
	maybe("extra", nested, value.NewMap())
	return it
}

// drawFastDoc is a base document, or a side drawn from one by edits.
func drawFastDoc(t *rapid.T, from *value.Map, label string) *value.Map {
	doc := value.NewMap()
	if from != nil {
		doc = value.Clone(from).(*value.Map)
	} else {
		doc.Set("schema_version", value.Int(1))
		doc.Set("sources", value.NewMap())
		doc.Set("items", value.NewMap())
	}
	items, _ := sweepcore.GetMap(doc, "items")
	sources, _ := sweepcore.GetMap(doc, "sources")
	for i := range rapid.IntRange(0, 10).Draw(t, label+" edits") {
		l := fmt.Sprintf("%s %d", label, i)
		key := rapid.SampledFrom(fastKeys).Draw(t, l+" key")
		switch rapid.IntRange(0, 13).Draw(t, l+" edit") {
		case 0, 1, 2, 3, 12, 13:
			items.Set(key, drawFastItem(t, l))
		case 4:
			items.Delete(key)
		case 5:
			if it, isMap := sweepcore.GetMap(items, key); isMap {
				it.Set("status", rapid.SampledFrom([]string{"closed", "analyzed"}).Draw(t, l+" status"))
			}
		case 6:
			src := rapid.SampledFrom(fastSources).Draw(t, l+" source")
			entry := value.NewMap()
			if rapid.IntRange(0, 3).Draw(t, l+" sensitive?") == 0 {
				entry.Set("sensitive", true)
			}
			entry.Set("cursor", rapid.SampledFrom([]string{"1", "2", "10"}).Draw(t, l+" cursor"))
			sources.Set(src, entry)
		case 7:
			lease := value.NewMap()
			lease.Set("writer", rapid.SampledFrom([]string{"wa", "wb"}).Draw(t, l+" writer"))
			lease.Set("timestamp", "2026-07-02T12:00:00Z")
			doc.Set("lease", lease)
		case 8:
			run := value.NewMap()
			run.Set("timestamp", rapid.SampledFrom([]string{"2026-07-02T12:00:00Z", "2026-07-02T13:00:00Z", "no"}).Draw(t, l+" run"))
			doc.Set("last_run", run)
		case 9:
			doc.Set("zz_note", rapid.SampledFrom([]string{"a", "b"}).Draw(t, l+" note"))
		case 10:
			if it, isMap := sweepcore.GetMap(items, key); isMap {
				it.Set("verified_merge_sha", "sha")
			}
		default:
			doc.Set("schema_version", value.Int(int64(rapid.IntRange(1, 2).Draw(t, l+" version"))))
		}
	}
	return doc
}

// fastText is the file of doc: the engine's writing, often in a form
// that is not quite it (a comment, the reference writer's bare forms, a
// key out of the canonical order), and now and then no file.
func fastText(t *rapid.T, doc *value.Map, label string) string {
	if rapid.IntRange(0, 20).Draw(t, label+" no file?") == 0 {
		return ""
	}
	text := string(yamlsubset.Emit(doc))
	switch rapid.IntRange(0, 7).Draw(t, label+" form") {
	case 0:
		lines := strings.SplitAfter(text, "\n")
		at := rapid.IntRange(0, len(lines)-1).Draw(t, label+" comment at")
		text = strings.Join(lines[:at], "") + "# a note\n" + strings.Join(lines[at:], "")
	case 1:
		text = strings.ReplaceAll(text, "\n    \"N\": ", "\n    N: ")
	case 2:
		text = strings.ReplaceAll(text, "\n    ratio: \"nan\"\n", "\n    ratio: nan\n")
	case 3:
		// schema_version last: read the same, not in the canonical order.
		first := strings.IndexByte(text, '\n') + 1
		text = text[first:] + text[:first]
	case 4:
		text = swapFirstItems(text)
	case 5:
		if rapid.IntRange(0, 3).Draw(t, label+" conflict markers?") == 0 {
			text = "schema_version: 1\n<<<<<<< ours\nitems: {}\n=======\n>>>>>>> theirs\n"
		}
	}
	return text
}

// swapFirstItems puts the first two items entries of an emitted text in
// the other order: the same document, its items out of key order.
func swapFirstItems(text string) string {
	lines := strings.SplitAfter(text, "\n")
	var starts []int // the items entries' key lines, then the line after the last
	in := false
	for i, l := range lines {
		switch {
		case l == "items:\n":
			in = true
		case in && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   "):
			starts = append(starts, i)
		case in && !strings.HasPrefix(l, "  "):
			starts = append(starts, i)
			in = false
		}
	}
	if in {
		starts = append(starts, len(lines))
	}
	if len(starts) < 3 {
		return text
	}
	first := strings.Join(lines[starts[0]:starts[1]], "")
	second := strings.Join(lines[starts[1]:starts[2]], "")
	return strings.Join(lines[:starts[0]], "") + second + first + strings.Join(lines[starts[2]:], "")
}

// TestMergeFastPathIsTheWholePath: on generated triples of files, the
// merge of texts split into their items entries (mergeTextsFast) gives the
// word, reason, counts and bytes of the merge of the texts parsed whole,
// for either side published.
func TestMergeFastPathIsTheWholePath(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := drawFastDoc(t, nil, "base")
		a := drawFastDoc(t, o, "ours")
		b := drawFastDoc(t, o, "theirs")
		texts := [3]string{fastText(t, o, "base"), fastText(t, a, "ours"), fastText(t, b, "theirs")}
		// Sometimes the sides are the same file, or one is the base's.
		switch rapid.IntRange(0, 6).Draw(t, "identity") {
		case 0:
			texts[2] = texts[1]
		case 1:
			texts[2] = texts[0]
		case 2:
			texts[1] = texts[0]
		}
		for _, pub := range []Published{PublishedOurs, PublishedTheirs} {
			checkFastIsWhole(t, texts, pub)
		}
	})
}

func checkFastIsWhole(t *rapid.T, texts [3]string, pub Published) {
	fastRes, merge, ok := mergeTextsFast(texts[0], texts[1], texts[2], pub)
	if !ok {
		t.Fatalf("the fast path declined\nbase %q\nours %q\ntheirs %q", texts[0], texts[1], texts[2])
	}
	wholeRes, doc := mergeTextsWhole(texts[0], texts[1], texts[2], pub)
	var fast []byte
	if merge != nil {
		var err error
		if fastRes, fast, err = writeFast(merge); err != nil {
			t.Fatal(err)
		}
	}
	var whole []byte
	if doc != nil {
		whole = yamlsubset.Emit(doc)
	}
	fastPayload, _ := fastRes.Payload.MarshalJSON()
	wholePayload, _ := wholeRes.Payload.MarshalJSON()
	if fastRes.Word != wholeRes.Word || fastRes.Reason != wholeRes.Reason || !bytes.Equal(fastPayload, wholePayload) || !bytes.Equal(fast, whole) {
		t.Fatalf("published %d\nfast:  %s %q %s\n%s\nwhole: %s %q %s\n%s\nbase %q\nours %q\ntheirs %q", pub,
			fastRes.Word, fastRes.Reason, fastPayload, fast, wholeRes.Word, wholeRes.Reason, wholePayload, whole, texts[0], texts[1], texts[2])
	}
}

// writeFast writes a fast merge to memory: its answer and text.
func writeFast(merge *fastMerge) (Result, []byte, error) {
	var b bytes.Buffer
	counts, err := merge.writeTo(&b)
	if err != nil {
		return Result{}, nil, err
	}
	return ok(counts.payload()), b.Bytes(), nil
}

// entriesOf counts a side's entries: split off, and parsed.
func entriesOf(s *mergeSide) (split, parsed int) {
	w := s.walk()
	for {
		k, more := w.head()
		if !more {
			return split, parsed
		}
		if w.take(k, "", "").split {
			split++
		} else {
			parsed++
		}
	}
}

// TestMergeFastPathSplitsTheBenchmarkFile: a file in the engine's own form
// is read with none of its items parsed, and the items the three sides
// hold alike reach the result as text, in runs.
func TestMergeFastPathSplitsTheBenchmarkFile(t *testing.T) {
	text := string(benchseed.SweepState(50))
	side, failed := loadMergeSide(text)
	if failed != nil {
		t.Fatal(failed.Reason)
	}
	if split, parsed := entriesOf(side); split != 50 || parsed != 0 || len(side.keys) != 0 {
		t.Fatalf("%d entries split off, %d parsed; want 50 and 0", split, parsed)
	}
	ours := strings.Replace(text, "writer: \"w1\"", "writer: \"w2\"", 1)
	theirs := strings.Replace(text, "Item 7:", "Item seven:", 1)
	res, merge, ok := mergeTextsFast(text, ours, theirs, PublishedTheirs)
	if !ok || res.Word != WordOK {
		t.Fatalf("fast path: %v %s", ok, res.Word)
	}
	_, b, err := writeFast(merge)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(ours, "Item 7:", "Item seven:", 1)
	if string(b) != want {
		t.Fatalf("merged\n%s\nwant\n%s", b, want)
	}
	// Fifty entries, all copied: the ones before item 7 and after it
	// from ours, item 7 from theirs, in three runs.
	if merge.runs != 3 {
		t.Fatalf("%d runs of copied entries written, want 3", merge.runs)
	}
}

// TestMergeFastPathTakesTheChangedSide: an item one side changed and the
// other still holds as the base had it comes out as the changed side wrote
// it, whichever side changed it and whichever side is published; the fast
// path copies that entry as text and agrees with the whole path. Each side
// changes an item of its own, so neither file is the base's (a side equal
// to the base is settled for the whole document before any item).
func TestMergeFastPathTakesTheChangedSide(t *testing.T) {
	base := string(benchseed.SweepState(20))
	seven := strings.Replace(base, "Item 7:", "Item seven:", 1)
	three := strings.Replace(base, "Item 3:", "Item three:", 1)
	both := strings.Replace(seven, "Item 3:", "Item three:", 1)
	if seven == base || three == base {
		t.Fatal("the benchmark file lacks the item titles this test changes")
	}
	for _, c := range []struct {
		name         string
		ours, theirs string
	}{
		{"ours changed item 7", seven, three},
		{"theirs changed item 7", three, seven},
	} {
		for _, pub := range []Published{PublishedOurs, PublishedTheirs} {
			res, merge, ok := mergeTextsFast(base, c.ours, c.theirs, pub)
			if !ok || res.Word != WordOK {
				t.Fatalf("%s, published %d: fast path %v, %s", c.name, pub, ok, res.Word)
			}
			_, b, err := writeFast(merge)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != both {
				t.Errorf("%s, published %d: merged\n%s\nwant both changes\n%s", c.name, pub, b, both)
			}
			_, doc := mergeTextsWhole(base, c.ours, c.theirs, pub)
			if whole := yamlsubset.Emit(doc); !bytes.Equal(whole, b) {
				t.Errorf("%s, published %d: the whole path wrote\n%s", c.name, pub, whole)
			}
		}
	}
}
