package sweepstate

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/model/value"
)

// The fast path of a merge. A text in the engine's own form (split by
// sweepcore.SplitMergeInput, the merge's row of the core's load table) is
// parsed without its items entries, which stay text: an entry is Emit's
// text for its item, so two entries are the same item exactly when their
// texts are the same. The three texts' entries
// are walked together in key order, and the result is written as the walk
// goes: the three-way rule of each item is decided on the texts where
// they settle it (the same on both sides, or one side the base's), and the
// winning entry is copied to the output as it is, unless redaction or the
// evidence check could change it; only the other items are parsed and
// merged as the general path does. Nothing is held per item: the walk
// finds each entry's end when it reaches it, and the output goes to the
// writer in runs. The answer and the bytes are the general path's
// (mergeTextsWhole).

// mergeSide is one input of a merge as the fast path reads it.
type mergeSide struct {
	// doc is what a load gives (schema_version, sources and items present,
	// items a map), without the entries of text that are Emit's text.
	doc *value.Map
	// text is the file's text, and entries walks its items entries (none
	// when doc is the whole text parsed); those doc's items hold are
	// taken from doc.
	text    string
	entries yamlsubset.ItemEntries
	// items is doc's items, and keys its keys in key order.
	items *value.Map
	keys  []string
}

// errNotSplit: an entry split off a text does not parse as one item (a
// defect of the split). The merge takes the general path instead.
var errNotSplit = errors.New("sweepstate: a split-off items entry does not parse")

// mergeTextsFast is mergeTexts' fast path: the answer when an input
// cannot be read (and a nil merge), or the merge to write (fastMerge.writeTo
// gives its counts). decided is false when it cannot decide (errNotSplit)
// before writing: the general path must answer.
func mergeTextsFast(base, ours, theirs string, published Published) (res Result, merge *fastMerge, decided bool) {
	var sides [3]*mergeSide
	for i, text := range []string{base, ours, theirs} {
		side, failed := loadMergeSide(text)
		if failed != nil {
			res := *failed
			if res.Word == WordCorrupt {
				res.Reason = sideNames[i] + ": " + res.Reason
			}
			return res, nil, true
		}
		sides[i] = side
	}
	merge, err := mergeSides(sides[0], sides[1], sides[2], published)
	if err != nil {
		return Result{}, nil, false
	}
	return Result{Word: WordOK}, merge, true
}

// loadMergeSide loads one input: split when it is in the engine's own
// form, whole otherwise. A failure is the one loadText gives the whole
// text.
func loadMergeSide(text string) (*mergeSide, *Result) {
	if reduced, entries, ok := sweepcore.SplitMergeInput(text); ok {
		if doc, failed := loadText(reduced); failed == nil {
			return newMergeSide(doc, text, entries), nil
		}
		// A canonical text loads without failing; should it fail, the
		// whole text decides the answer.
	}
	doc, failed := loadText(text)
	if failed != nil {
		return nil, failed
	}
	return newMergeSide(doc, "", yamlsubset.ItemEntries{}), nil
}

func newMergeSide(doc *value.Map, text string, entries yamlsubset.ItemEntries) *mergeSide {
	items := sweepcore.MapAt(doc, "items")
	keys := items.Keys()
	if !slices.IsSorted(keys) {
		slices.Sort(keys)
	}
	return &mergeSide{doc: doc, text: text, entries: entries, items: items, keys: keys}
}

// sideItem is one side's entry of an item: split off (its text in the
// side's text from start to end) or parsed (v).
type sideItem struct {
	present    bool
	split      bool
	start, end int
	v          value.Value
}

// sideWalk reads a side's entries in key order.
type sideWalk struct {
	s  *mergeSide
	e  yamlsubset.ItemEntries
	ki int
}

func (s *mergeSide) walk() sideWalk { return sideWalk{s: s, e: s.entries} }

// splitHead is the key of the next entry that is Emit's text, passing
// over those doc holds.
func (w *sideWalk) splitHead() (string, bool) {
	for {
		k, ok := w.e.Key()
		if !ok || len(w.s.keys) == 0 || !w.s.items.Has(k) {
			return k, ok
		}
		w.e.Next()
	}
}

// head is the key of the next entry.
func (w *sideWalk) head() (string, bool) {
	ks, hasS := w.splitHead()
	hasK := w.ki < len(w.s.keys)
	switch {
	case hasS && hasK:
		return min(ks, w.s.keys[w.ki]), true
	case hasS:
		return ks, true
	case hasK:
		return w.s.keys[w.ki], true
	}
	return "", false
}

// take is the entry of key k, absent when the next entry is another's;
// entries before k are passed over. like and other are texts the entry
// may well be (another side's entry of k, or ""): one that it is is found
// with one comparison instead of a read of the entry's lines.
func (w *sideWalk) take(k, like, other string) sideItem {
	ks, hasS := w.splitHead()
	for hasS && ks < k {
		w.e.Next()
		ks, hasS = w.splitHead()
	}
	for w.ki < len(w.s.keys) && w.s.keys[w.ki] < k {
		w.ki++
	}
	if hasS && ks == k {
		start := w.e.At()
		switch {
		case like != "" && w.e.NextIs(like):
			return sideItem{present: true, split: true, start: start, end: start + len(like)}
		case other != "" && w.e.NextIs(other):
			return sideItem{present: true, split: true, start: start, end: start + len(other)}
		}
		b := w.e.Next()
		return sideItem{present: true, split: true, start: b.Start, end: b.End}
	}
	if w.ki < len(w.s.keys) && w.s.keys[w.ki] == k {
		w.ki++
		v, _ := w.s.items.Get(k)
		return sideItem{present: true, v: v}
	}
	return sideItem{}
}

// textOf is a split-off entry's text, "" for any other.
func (s *mergeSide) textOf(it sideItem) string { return s.text[it.start:it.end] }

// valueOf is the entry's item as an opt, parsed if it was split off.
func (s *mergeSide) valueOf(key string, it sideItem) (opt, error) {
	if !it.present {
		return opt{}, nil
	}
	if !it.split {
		return opt{it.v, true}, nil
	}
	doc, err := yamlsubset.ParseString("items:\n" + s.textOf(it))
	if err != nil {
		return opt{}, errNotSplit
	}
	items, isMap := sweepcore.MapGet(doc, "items").(*value.Map)
	if !isMap || items.Len() != 1 || doc.Len() != 1 {
		return opt{}, errNotSplit
	}
	v, found := items.Get(key)
	if !found {
		return opt{}, errNotSplit
	}
	return opt{v, true}, nil
}

// sameItem: two entries hold the same item (both absent, or equal).
func sameItem(x *mergeSide, ex sideItem, y *mergeSide, ey sideItem, key string) (bool, error) {
	if ex.present != ey.present {
		return false, nil
	}
	if !ex.present {
		return true, nil
	}
	if ex.split && ey.split {
		return x.textOf(ex) == y.textOf(ey), nil
	}
	vx, err := x.valueOf(key, ex)
	if err != nil {
		return false, err
	}
	vy, err := y.valueOf(key, ey)
	if err != nil {
		return false, err
	}
	return vx.same(vy), nil
}

// splitText is the text of a split-off entry, "" for any other.
func splitText(s *mergeSide, it sideItem) string {
	if !it.split {
		return ""
	}
	return s.textOf(it)
}

// sidesEqual is value.Equal of the two sides' whole documents.
func sidesEqual(x, y *mergeSide) (bool, error) {
	if x.doc.Len() != y.doc.Len() {
		return false, nil
	}
	for i := range x.doc.Len() {
		k, v := x.doc.At(i)
		if k == "items" {
			continue
		}
		if w, found := y.doc.Get(k); !found || !value.Equal(v, w) {
			return false, nil
		}
	}
	wx, wy := x.walk(), y.walk()
	for {
		kx, more := wx.head()
		ky, moreY := wy.head()
		if !more || !moreY || ky != kx {
			return !more && !moreY, nil
		}
		ex := wx.take(kx, "", "")
		ey := wy.take(kx, splitText(x, ex), "")
		if same, err := sameItem(x, ex, y, ey, kx); !same || err != nil {
			return false, err
		}
	}
}

// fastMerge is a merge's result, to be written: the top level (its items
// an empty map), and the walk that writes the items entries in key order.
type fastMerge struct {
	top   *value.Map
	items func(*entryWriter) error
	// m holds the merge's counts once the items are written (nil: a side
	// is the result whole, and counts nothing).
	m *merger
	// runs: the runs of copied entries the last write wrote (for the
	// tests).
	runs int
}

// entryWriter writes the items entries of a result.
type entryWriter struct {
	ew      *errorWriter
	started bool // the "items:" line is written
	// The run of entries next to each other in one side's text that the
	// last copies made, not yet written.
	run        *mergeSide
	start, end int
	runs       int // runs written (for the tests)
}

// begin writes the "items:" line before the first entry.
func (t *entryWriter) begin() {
	if !t.started {
		t.ew.writeString("items:\n")
		t.started = true
	}
}

// copyEntry puts a side's split-off entry into the result as it is.
func (t *entryWriter) copyEntry(s *mergeSide, it sideItem) {
	if t.run == s && t.end == it.start {
		t.end = it.end
		return
	}
	t.endRun()
	t.run, t.start, t.end = s, it.start, it.end
}

func (t *entryWriter) endRun() {
	if t.run != nil {
		t.begin()
		t.ew.writeString(t.run.text[t.start:t.end])
		t.runs++
		t.run = nil
	}
}

// emitEntry puts an item into the result as Emit writes it in items.
func (t *entryWriter) emitEntry(key string, v value.Value) {
	t.endRun()
	items := value.NewMapSize(1)
	items.Set(key, v)
	doc := value.NewMapSize(1)
	doc.Set("items", items)
	text := yamlsubset.Emit(doc)
	t.begin()
	t.ew.write(text[len("items:\n"):])
}

// writeTo writes Emit's text of the merged document to w: the top
// level's, with the entries where its empty items map is, and returns
// the merge's counts. errNotSplit says the walk found it cannot decide:
// what it wrote is not the result.
func (f *fastMerge) writeTo(w io.Writer) (MergeCounts, error) {
	head := yamlsubset.Emit(f.top)
	// The top level's keys start their lines, and no value holds a raw
	// line break, so the line is found only where the key is.
	const empty = "\nitems: {}\n"
	at := strings.Index(string(head), empty)
	if at < 0 {
		return MergeCounts{}, errNotSplit // the top level always has its items
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	ew := &errorWriter{w: bw}
	ew.write(head[:at+1])
	t := &entryWriter{ew: ew}
	if err := f.items(t); err != nil {
		return MergeCounts{}, err
	}
	t.endRun()
	f.runs = t.runs
	if !t.started {
		ew.writeString("items: {}\n")
	}
	ew.write(head[at+len(empty):])
	if ew.err != nil {
		return MergeCounts{}, ew.err
	}
	var counts MergeCounts
	if f.m != nil {
		counts = f.m.counts
	}
	return counts, bw.Flush()
}

type errorWriter struct {
	w   *bufio.Writer
	err error
}

func (e *errorWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *errorWriter) writeString(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// whole is the result that is side s as it is (mergeLoaded's identity
// cases): its document, schema_version as a write carries it.
func whole(s *mergeSide) *fastMerge {
	top := withVersion(s.doc, writtenVersion(s.doc))
	top.Set("items", value.NewMap())
	return &fastMerge{top: top, items: func(t *entryWriter) error {
		w := s.walk()
		for {
			k, more := w.head()
			if !more {
				return nil
			}
			it := w.take(k, "", "")
			if it.split {
				t.copyEntry(s, it)
			} else {
				t.emitEntry(k, it.v)
			}
		}
	}}
}

// mergeSides is mergeLoaded over split sides.
func mergeSides(o, a, b *mergeSide, published Published) (*fastMerge, error) {
	for _, pair := range [][2]*mergeSide{{a, b}, {b, o}} {
		if same, err := sidesEqual(pair[0], pair[1]); same || err != nil {
			return whole(a), err
		}
	}
	if same, err := sidesEqual(a, o); same || err != nil {
		return whole(b), err
	}
	f := &fastMerge{}
	var sources [3]*value.Map
	f.top, _ = mergeChanged(o.doc, a.doc, b.doc, published, func(m *merger, s [3]*value.Map) value.Value {
		f.m, sources = m, s
		return value.NewMap()
	})
	f.items = func(t *entryWriter) error { return mergeItemsFast(f.m, sources, o, a, b, t) }
	return f, nil
}

// mergeItemsFast is merger.items over split sides, written to t.
func mergeItemsFast(m *merger, sources [3]*value.Map, o, a, b *mergeSide, t *entryWriter) error {
	var flagged bool // a source is sensitive somewhere
	for _, s := range sources {
		if s == nil {
			continue
		}
		for i := range s.Len() {
			_, e := s.At(i)
			if entry, isMap := e.(*value.Map); isMap && sweepcore.MapGet(entry, "sensitive") == true {
				flagged = true
			}
		}
	}
	wo, wa, wb := o.walk(), a.walk(), b.walk()
	for {
		ka, hasA := wa.head()
		kb, hasB := wb.head()
		var k string
		switch {
		case hasA && hasB:
			k = min(ka, kb)
		case hasA:
			k = ka
		case hasB:
			k = kb
		default:
			return nil
		}
		ea := wa.take(k, "", "")
		eb := wb.take(k, splitText(a, ea), "")
		eo := wo.take(k, splitText(b, eb), splitText(a, ea))
		// The entry the three-way rule settles on its text, when it does.
		var winner *mergeSide
		var won sideItem
		switch {
		case ea.split && (!eb.present || eb.split && a.textOf(ea) == b.textOf(eb)):
			winner, won = a, ea
		case !ea.present && eb.split:
			winner, won = b, eb
		case ea.split && eb.split:
			if eo.split {
				switch o.textOf(eo) {
				case b.textOf(eb):
					winner, won = a, ea
				case a.textOf(ea):
					winner, won = b, eb
				}
			}
		}
		if winner != nil && unchangedByFinish(winner.textOf(won), a, ea, b, eb, flagged) {
			t.copyEntry(winner, won)
			continue
		}
		ia, err := a.valueOf(k, ea)
		if err != nil {
			return err
		}
		ib, err := b.valueOf(k, eb)
		if err != nil {
			return err
		}
		merged := ib.v
		if ia.ok {
			merged = m.item(ia, ib, func() opt {
				var io opt
				io, err = o.valueOf(k, eo)
				return io
			})
			if err != nil {
				return err
			}
		}
		t.emitEntry(k, m.finish(k, merged, ia, ib, sources))
	}
}

// unchangedByFinish: merger.finish leaves the item of entry text r as it
// is, and counts nothing, when ours' and theirs' entries are ea and eb
// (split off, or absent) and flagged says whether a source is sensitive
// in ours', theirs' or the result's sources. It reads r as Emit writes an
// item (its keys bare, at four spaces, each line whole) and answers false
// whenever the text alone does not settle it.
func unchangedByFinish(r string, a *mergeSide, ea sideItem, b *mergeSide, eb sideItem, flagged bool) bool {
	const indent = "\n    "
	if strings.Contains(r, indent+`status: "closed"`+"\n") {
		// Evidence: each field a string that is not empty.
		for _, f := range sweepcore.EvidenceFields {
			at := strings.Index(r, indent+f+`: "`)
			if at < 0 || r[at+len(indent)+len(f)+3] == '"' {
				return false
			}
		}
	}
	if !strings.Contains(r, indent+"body:") && !strings.Contains(r, indent+"quote:") {
		return true
	}
	if flagged {
		return false
	}
	for _, side := range []struct {
		s  *mergeSide
		it sideItem
	}{{a, ea}, {b, eb}} {
		if side.it.present && strings.Contains(side.s.textOf(side.it), indent+"sensitive: true\n") {
			return false
		}
	}
	return true
}
