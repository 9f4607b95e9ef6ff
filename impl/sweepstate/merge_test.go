package sweepstate_test

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// A triple is a base and two sides made from copies of it by random model
// commands and hand edits; log says how, one line per step, for a failure.
type triple struct {
	o, a, b sweep.State
	log     []string
}

var (
	mergeWriters = []string{"wa", "wb", "wc"}
	mergeSources = []string{"gh", "chat", "chat:x", "mail"}
	mergeIDs     = []string{"1", "2", "x:13"}
	mergeTimes   = []string{"2026-07-02T12:00:00Z", "2026-07-02T12:30:00Z", "2026-07-02T14:00:00+01:00",
		"2026-07-02T13:00:00Z", "2026-07-03T00:00:00Z", "not a time"}
	mergeCursors = []string{"1", "9", "10", "0010", "a", "b", "2026-07-02T12:00:00Z", "9²"}
)

// drawStep applies one random command or hand edit to st.
func drawStep(t *rapid.T, st sweep.State, n int, label string) (sweep.State, string) {
	w := rapid.SampledFrom(mergeWriters).Draw(t, label+" writer")
	now := rapid.SampledFrom(mergeTimes).Draw(t, label+" now")
	src := rapid.SampledFrom(mergeSources).Draw(t, label+" source")
	id := rapid.SampledFrom(mergeIDs).Draw(t, label+" id")
	var cmd sweep.Command
	switch rapid.IntRange(0, 12).Draw(t, label+" step") {
	case 0, 1:
		c := sweep.LeaseAcquire{Writer: w, Now: now}
		if rapid.Bool().Draw(t, label+" ttl?") {
			c.TTLMinutes = big.NewInt(int64(rapid.IntRange(0, 90).Draw(t, label+" ttl")))
		}
		cmd = c
	case 2:
		cmd = sweep.LeaseRelease{Writer: w}
	case 3, 4, 5:
		// Upserts need the lease: take the holder's name often.
		if holder, ok := leaseWriter(st); ok && rapid.IntRange(0, 3).Draw(t, label+" as holder?") > 0 {
			w = holder
		}
		cmd = sweep.UpsertItem{Source: src, ID: id, Writer: w, Now: now,
			Item: sweep.Decoded{Value: drawItem(t, n, label), OK: true}}
	case 6, 12:
		// A cursor moves past a recorded item: record it first.
		holder, ok := leaseWriter(st)
		if !ok {
			_, st = sweep.Apply(st, sweep.LeaseAcquire{Writer: w, Now: now})
			holder = w
		}
		w = holder
		_, st = sweep.Apply(st, sweep.UpsertItem{Source: src, ID: id, Writer: w, Now: now,
			Item: sweep.Decoded{Value: value.NewMap(), OK: true}})
		cmd = sweep.CursorAdvance{Source: src, To: rapid.SampledFrom(mergeCursors).Draw(t, label+" to"),
			PastItem: id, Writer: w, Now: now}
	case 7:
		counts := value.NewMap()
		counts.Set("ingested", value.Int(int64(n)))
		cmd = sweep.RunRecord{Writer: w, Outcome: "completed", Timestamp: now, Counts: sweep.Decoded{Value: counts, OK: true}}
	case 8:
		cmd = sweep.Validate{}
	default:
		return mergeHandEdit(t, st, n, label, src, id)
	}
	_, next := sweep.Apply(st, cmd)
	return next, fmt.Sprintf("%T %+v", cmd, cmd)
}

func leaseWriter(st sweep.State) (string, bool) {
	if st.Kind != sweep.Parsed {
		return "", false
	}
	lease, _ := mustMap(st.Doc, "lease")
	if lease == nil {
		return "", false
	}
	w, ok := lease.Get("writer")
	s, isString := w.(string)
	return s, ok && isString
}

// drawItem is an upsert's object: text, flags and evidence of every kind.
func drawItem(t *rapid.T, n int, label string) *value.Map {
	o := value.NewMap()
	if rapid.Bool().Draw(t, label+" status?") {
		o.Set("status", rapid.SampledFrom([]string{"ingested", "analyzed", "closed", "fix_pending"}).Draw(t, label+" status"))
	}
	switch rapid.IntRange(0, 3).Draw(t, label+" sensitive") {
	case 1:
		o.Set("sensitive", true)
	case 2:
		o.Set("sensitive", false)
	}
	if rapid.Bool().Draw(t, label+" body?") {
		o.Set("body", fmt.Sprintf("secret-%s-%d", label, n))
	}
	if rapid.IntRange(0, 3).Draw(t, label+" quote?") == 0 {
		o.Set("quote", fmt.Sprintf("quote-%s-%d", label, n))
	}
	for _, f := range []string{"fix_ref", "verified_revision_id", "verified_at", "title"} {
		switch rapid.IntRange(0, 3).Draw(t, label+" "+f) {
		case 0:
			o.Set(f, fmt.Sprintf("%s-%s-%d", f, label, n))
		case 1:
			o.Set(f, "")
		}
	}
	return o
}

// mergeHandEdit changes the document as a person (or another tool) might:
// the inputs the engine's own commands never produce.
func mergeHandEdit(t *rapid.T, st sweep.State, n int, label, src, id string) (sweep.State, string) {
	if st.Kind != sweep.Parsed {
		return st, "hand edit skipped (no file)"
	}
	doc := value.Clone(st.Doc).(*value.Map)
	items, _ := mustMap(doc, "items")
	sources, _ := mustMap(doc, "sources")
	key := src + ":" + id
	var what string
	switch rapid.IntRange(0, 7).Draw(t, label+" edit") {
	case 0:
		items.Delete(key)
		what = "delete item " + key
	case 1:
		if sources != nil {
			entry, _ := mustMap(sources, src)
			if entry == nil {
				entry = value.NewMap()
			}
			entry.Set("sensitive", true)
			sources.Set(src, entry)
		}
		what = "mark source sensitive " + src
	case 2:
		if sources != nil {
			entry, _ := mustMap(sources, src)
			if entry == nil {
				entry = value.NewMap()
			}
			entry.Set("cursor", rapid.SampledFrom(mergeCursors).Draw(t, label+" edited cursor"))
			sources.Set(src, entry)
		}
		what = "set cursor of " + src
	case 3:
		doc.Set("zz_note", fmt.Sprintf("%s-%d", label, n))
		what = "unknown key"
	case 4:
		items.Set(key, value.Int(int64(n)))
		what = "non-map item " + key
	case 5:
		item, _ := mustMap(items, key)
		if item == nil {
			item = value.NewMap()
		}
		item.Delete("verified_revision_id")
		item.Set("verified_merge_sha", fmt.Sprintf("sha-%d", n))
		items.Set(key, item)
		what = "legacy evidence on " + key
	case 6:
		doc.Set("schema_version", value.Int(int64(rapid.IntRange(0, 3).Draw(t, label+" version"))))
		what = "schema_version edit"
	default:
		if sources != nil {
			sources.Set(src, value.Int(7))
		}
		what = "non-map source entry " + src
	}
	return sweep.State{Kind: sweep.Parsed, Doc: doc}, what
}

func drawTriple(t *rapid.T) triple {
	var tr triple
	steps := func(st sweep.State, label string, most int) sweep.State {
		for i := range rapid.IntRange(0, most).Draw(t, label+" steps") {
			var line string
			st, line = drawStep(t, st, i, label)
			tr.log = append(tr.log, label+": "+line)
		}
		return st
	}
	tr.o = steps(sweep.State{Kind: sweep.Absent}, "base", 12)
	tr.a = steps(tr.o, "ours", 10)
	tr.b = steps(tr.o, "theirs", 10)
	return tr
}

// text is what the state file holds: the engine's writing of the model's
// document, "" for no file.
func text(st sweep.State) string {
	if st.Kind != sweep.Parsed {
		return ""
	}
	return string(yamlsubset.Emit(st.Doc))
}

// canonical is the engine's writing of what a load of st gives: the
// bytes merge(O, A, A) must be for A = st.
func canonical(t *rapid.T, st sweep.State) []byte {
	res, _ := sweep.Apply(st, sweep.Read{})
	if res.Word == sweep.NoState {
		return []byte("schema_version: 1\nsources: {}\nitems: {}\n")
	}
	doc := res.Payload.(*value.Map)
	if v, isInt := doc.Get("schema_version"); !isInt || v.(*big.Int).Cmp(big.NewInt(1)) <= 0 {
		doc.Set("schema_version", value.Int(1))
	}
	return yamlsubset.Emit(doc)
}

func mergeOf(t *rapid.T, tr triple, o, a, b sweep.State, pub sweepstate.Published) (sweepstate.Result, []byte) {
	res, out := sweepstate.MergeTexts(text(o), text(a), text(b), pub)
	if res.Word != sweepstate.WordOK {
		t.Fatalf("merge answered %s (%s)\n%s", res.Word, res.Reason, strings.Join(tr.log, "\n"))
	}
	return res, out
}

// TestMergeMatchesModel: the engine's merge and model/sweep's reading of
// spec §21 give the same word, document and counts.
func TestMergeMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := drawTriple(t)
		o, a, b := tr.o, tr.a, tr.b
		texts := []string{text(o), text(a), text(b)}
		// Now and then an input is unreadable: conflict markers.
		if broken := rapid.IntRange(0, 15).Draw(t, "broken input"); broken < 3 {
			texts[broken] = "schema_version: 1\n<<<<<<< ours\nitems: {}\n=======\n>>>>>>> theirs\n"
			[]*sweep.State{&o, &a, &b}[broken].Kind = sweep.Unreadable
		}
		oursPublished := rapid.Bool().Draw(t, "ours published")
		pub := sweepstate.PublishedTheirs
		if oursPublished {
			pub = sweepstate.PublishedOurs
		}
		res, out := sweepstate.MergeTexts(texts[0], texts[1], texts[2], pub)
		word, doc, counts := sweep.Merge(o, a, b, oursPublished)
		log := strings.Join(tr.log, "\n")
		if string(res.Word) != word {
			t.Fatalf("engine %s (%s), model %s\n%s", res.Word, res.Reason, word, log)
		}
		if word != sweep.OK {
			if out != nil {
				t.Fatalf("a %s merge gave text", word)
			}
			return
		}
		got, err := yamlsubset.Parse(out)
		if err != nil {
			t.Fatalf("merged text does not parse: %v\n%s", err, out)
		}
		if !value.EqualOrdered(got, doc) {
			t.Fatalf("engine\n%s\nmodel\n%s\n%s", pyjson.Encode(got), pyjson.Encode(doc), log)
		}
		want := fmt.Sprintf(`{"items_merged": %d, "fields_settled_by_published": %d, "cursors_advanced": %d, "evidence_downgrades": %d}`,
			counts.ItemsMerged, counts.SettledByPublished, counts.CursorsAdvanced, counts.EvidenceDowngrades)
		if gotCounts, _ := res.Payload.MarshalJSON(); string(gotCounts) != want {
			t.Fatalf("counts %s, model %s\n%s", gotCounts, want, log)
		}
	})
}

// TestMergeLaws: symmetry, identity and safety over generated triples.
func TestMergeLaws(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := drawTriple(t)
		o, a, b := tr.o, tr.a, tr.b
		log := strings.Join(tr.log, "\n")
		for _, pub := range []sweepstate.Published{sweepstate.PublishedOurs, sweepstate.PublishedTheirs} {
			other := sweepstate.PublishedTheirs
			if pub == other {
				other = sweepstate.PublishedOurs
			}
			res, out := mergeOf(t, tr, o, a, b, pub)
			swapped, outSwapped := mergeOf(t, tr, o, b, a, other)
			if !bytes.Equal(out, outSwapped) {
				t.Fatalf("symmetry: published %d\n%s\nswapped\n%s\n%s", pub, out, outSwapped, log)
			}
			p1, _ := res.Payload.MarshalJSON()
			p2, _ := swapped.Payload.MarshalJSON()
			if !bytes.Equal(p1, p2) {
				t.Fatalf("symmetry of counts: %s, swapped %s\n%s", p1, p2, log)
			}
			for _, id := range []struct {
				name    string
				x, y, z sweep.State
				want    sweep.State
			}{{"merge(O,A,A)=A", o, a, a, a}, {"merge(O,O,B)=B", o, o, b, b}, {"merge(O,A,O)=A", o, a, o, a}} {
				if _, got := mergeOf(t, tr, id.x, id.y, id.z, pub); !bytes.Equal(got, canonical(t, id.want)) {
					t.Fatalf("%s: got\n%s\nwant\n%s\n%s", id.name, got, canonical(t, id.want), log)
				}
			}
			merged, err := yamlsubset.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			// Safety is the law of a real merge: where one side changed
			// nothing, the other is the result as it is (identity), hand
			// edits included (spec §21.3).
			da, db, do := readDoc(a), readDoc(b), readDoc(o)
			if !value.Equal(da, db) && !value.Equal(da, do) && !value.Equal(db, do) {
				checkSafety(t, da, db, do, merged, pub, log)
			}
		}
	})
}

// readDoc is the document a load gives: for no file, the fresh state a
// load starts from (schema_version 1 included), which the merge compares.
func readDoc(st sweep.State) *value.Map {
	res, _ := sweep.Apply(st, sweep.Read{})
	if doc, ok := res.Payload.(*value.Map); ok {
		return doc
	}
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	doc.Set("sources", value.NewMap())
	doc.Set("items", value.NewMap())
	return doc
}

func checkSafety(t *rapid.T, a, b, o, merged *value.Map, pub sweepstate.Published, log string) {
	leaseA, hasA := a.Get("lease")
	leaseB, hasB := b.Get("lease")
	leaseO, hasO := o.Get("lease")
	changed := func(v value.Value, has bool) bool { return has != hasO || has && !value.Equal(v, leaseO) }
	if changed(leaseA, hasA) && changed(leaseB, hasB) && (hasA != hasB || hasA && !value.Equal(leaseA, leaseB)) {
		wantV, wantHas := leaseA, hasA
		if pub == sweepstate.PublishedTheirs {
			wantV, wantHas = leaseB, hasB
		}
		got, has := merged.Get("lease")
		if has != wantHas || has && !value.Equal(got, wantV) {
			t.Fatalf("both changed the lease: got %s, the published side's is %s\n%s", pyjson.Encode(got), pyjson.Encode(wantV), log)
		}
	}
	items, _ := mustMap(merged, "items")
	for _, side := range []*value.Map{a, b} {
		sideItems, _ := mustMap(side, "items")
		for _, k := range sideItems.Keys() {
			if !items.Has(k) {
				t.Fatalf("item %q of a side lost\n%s", k, log)
			}
		}
		sideSources, _ := mustMap(side, "sources")
		if sideSources == nil {
			continue
		}
		mergedSources, _ := mustMap(merged, "sources")
		for _, s := range sideSources.Keys() {
			entry, _ := mustMap(sideSources, s)
			if entry == nil {
				continue
			}
			c, _ := entry.Get("cursor")
			if c == nil {
				continue
			}
			got, _ := mustMap(mergedSources, s)
			gc, _ := got.Get("cursor")
			if gc == nil || sweep.CursorLess(sweep.PyStr(gc), sweep.PyStr(c)) {
				t.Fatalf("cursor of %q ends at %v, behind a side's %v\n%s", s, gc, c, log)
			}
		}
	}
	for _, k := range items.Keys() {
		item, _ := mustMap(items, k)
		if item == nil || !item.Has("body") && !item.Has("quote") {
			continue
		}
		for _, d := range []*value.Map{a, b, merged} {
			if flaggedIn(d, k) {
				t.Fatalf("item %q keeps body or quote although sensitive\n%s", k, log)
			}
		}
	}
}

// flaggedIn: the item or a source it belongs to is marked sensitive in d.
func flaggedIn(d *value.Map, key string) bool {
	items, _ := mustMap(d, "items")
	sources, _ := mustMap(d, "sources")
	item, _ := mustMap(items, key)
	var names []string
	if item != nil {
		if v, _ := item.Get("sensitive"); v == true {
			return true
		}
		if s, ok := item.Get("source"); ok {
			if str, isString := s.(string); isString {
				names = append(names, str)
			}
		}
	}
	for i := strings.Index(key, ":"); i >= 0; {
		names = append(names, key[:i])
		next := strings.Index(key[i+1:], ":")
		if next < 0 {
			break
		}
		i += next + 1
	}
	for _, n := range names {
		if entry, _ := mustMap(sources, n); entry != nil {
			if v, _ := entry.Get("sensitive"); v == true {
				return true
			}
		}
	}
	return false
}
