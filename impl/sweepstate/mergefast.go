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
// texts are the same. The three-way rule of each
// item is then decided on the texts where they settle it (the same on
// both sides, or one side the base's), and the winning entry is copied to
// the result as it is, unless redaction or the evidence check could change
// it; only the other items are parsed and merged as the general path does.
// The answer and the bytes are the general path's (mergeTextsWhole).

// mergeSide is one input of a merge as the fast path reads it.
type mergeSide struct {
	// doc is what a load gives (schema_version, sources and items present,
	// items a map), without the entries of blocks.
	doc *value.Map
	// text is the file's text, which blocks index.
	text string
	// blocks are the items entries left out of doc, in key order.
	blocks []yamlsubset.ItemBlock
	// keys are the keys of doc's items, in key order.
	keys []string
}

// errNotSplit: an entry split off a text does not parse as one item (a
// defect of the split). The merge takes the general path instead.
var errNotSplit = errors.New("sweepstate: a split-off items entry does not parse")

// mergeTextsFast is mergeTexts' fast path. ok is false when it cannot
// decide (errNotSplit): the general path must answer.
func mergeTextsFast(base, ours, theirs string, published Published) (Result, func(io.Writer) error, bool) {
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
	merged, counts, err := mergeSides(sides[0], sides[1], sides[2], published)
	if err != nil {
		return Result{}, nil, false
	}
	return ok(counts.payload()), merged.writeTo, true
}

// loadMergeSide loads one input: split when it is in the engine's own
// form, whole otherwise. A failure is the one loadText gives the whole
// text.
func loadMergeSide(text string) (*mergeSide, *Result) {
	if reduced, others, ok := sweepcore.SplitMergeInput(text); ok && others.Len() > 0 {
		if st, failed := loadText(reduced); failed == nil {
			return newMergeSide(st.doc, text, others.Blocks()), nil
		}
		// A canonical text loads without failing; should it fail, the
		// whole text decides the answer.
	}
	st, failed := loadText(text)
	if failed != nil {
		return nil, failed
	}
	return newMergeSide(st.doc, "", nil), nil
}

func newMergeSide(doc *value.Map, text string, blocks []yamlsubset.ItemBlock) *mergeSide {
	keys := mapAt(doc, "items").Keys()
	if !slices.IsSorted(keys) {
		slices.Sort(keys)
	}
	return &mergeSide{doc: doc, text: text, blocks: blocks, keys: keys}
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
	s      *mergeSide
	bi, ki int
}

// head is the key of the next entry.
func (w *sideWalk) head() (string, bool) {
	hasB, hasK := w.bi < len(w.s.blocks), w.ki < len(w.s.keys)
	switch {
	case hasB && hasK:
		return min(w.s.blocks[w.bi].Key, w.s.keys[w.ki]), true
	case hasB:
		return w.s.blocks[w.bi].Key, true
	case hasK:
		return w.s.keys[w.ki], true
	}
	return "", false
}

// take is the entry of key k, absent when the next entry is another's;
// entries before k are passed over.
func (w *sideWalk) take(k string) sideItem {
	for w.bi < len(w.s.blocks) && w.s.blocks[w.bi].Key < k {
		w.bi++
	}
	for w.ki < len(w.s.keys) && w.s.keys[w.ki] < k {
		w.ki++
	}
	if w.bi < len(w.s.blocks) && w.s.blocks[w.bi].Key == k {
		b := w.s.blocks[w.bi]
		w.bi++
		return sideItem{present: true, split: true, start: b.Start, end: b.End}
	}
	if w.ki < len(w.s.keys) && w.s.keys[w.ki] == k {
		w.ki++
		v, _ := mapAt(w.s.doc, "items").Get(k)
		return sideItem{present: true, v: v}
	}
	return sideItem{}
}

// textOf is a split-off entry's text.
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
	items, isMap := mapGet(doc, "items").(*value.Map)
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

// sidesEqual is value.Equal of the two sides' whole documents.
func sidesEqual(x, y *mergeSide) (bool, error) {
	if x.doc.Len() != y.doc.Len() || len(x.blocks)+len(x.keys) != len(y.blocks)+len(y.keys) {
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
	wx, wy := sideWalk{s: x}, sideWalk{s: y}
	for {
		kx, more := wx.head()
		if !more {
			return true, nil
		}
		if ky, _ := wy.head(); ky != kx {
			return false, nil
		}
		if same, err := sameItem(x, wx.take(kx), y, wy.take(kx), kx); !same || err != nil {
			return false, err
		}
	}
}

// mergedText is a merge's result: the top level (its items an empty map)
// and the items entries, in key order, as the text to write.
type mergedText struct {
	top    *value.Map
	pieces []string
	// The run of entries next to each other in one side's text that the
	// last copies made, not yet in pieces.
	run        *mergeSide
	start, end int
}

// copyEntry puts a side's split-off entry into the result as it is.
func (t *mergedText) copyEntry(s *mergeSide, it sideItem) {
	if t.run == s && t.end == it.start {
		t.end = it.end
		return
	}
	t.endRun()
	t.run, t.start, t.end = s, it.start, it.end
}

func (t *mergedText) endRun() {
	if t.run != nil {
		t.pieces = append(t.pieces, t.run.text[t.start:t.end])
		t.run = nil
	}
}

// emitEntry puts an item into the result as Emit writes it in items.
func (t *mergedText) emitEntry(key string, v value.Value) {
	t.endRun()
	items := value.NewMapSize(1)
	items.Set(key, v)
	doc := value.NewMapSize(1)
	doc.Set("items", items)
	text := yamlsubset.Emit(doc)
	t.pieces = append(t.pieces, string(text[len("items:\n"):]))
}

// writeTo writes Emit's text of the merged document: the top level's,
// with the entries where its empty items map is.
func (t *mergedText) writeTo(w io.Writer) error {
	t.endRun()
	head := yamlsubset.Emit(t.top)
	// The top level's keys start their lines, and no value holds a raw
	// line break, so the line is found only where the key is.
	const empty = "\nitems: {}\n"
	at := strings.Index(string(head), empty)
	if at < 0 {
		return errNotSplit // the top level always has its items
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	ew := &errorWriter{w: bw}
	ew.write(head[:at+1])
	if len(t.pieces) == 0 {
		ew.writeString("items: {}\n")
	} else {
		ew.writeString("items:\n")
		for _, p := range t.pieces {
			ew.writeString(p)
		}
	}
	ew.write(head[at+len(empty):])
	if ew.err != nil {
		return ew.err
	}
	return bw.Flush()
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
func whole(s *mergeSide) *mergedText {
	t := &mergedText{top: withVersion(s.doc, writtenVersion(s.doc))}
	t.top.Set("items", value.NewMap())
	w := sideWalk{s: s}
	for {
		k, more := w.head()
		if !more {
			return t
		}
		it := w.take(k)
		if it.split {
			t.copyEntry(s, it)
		} else {
			t.emitEntry(k, it.v)
		}
	}
}

// mergeSides is mergeLoaded over split sides.
func mergeSides(o, a, b *mergeSide, published Published) (*mergedText, MergeCounts, error) {
	for _, pair := range [][2]*mergeSide{{a, b}, {b, o}} {
		if same, err := sidesEqual(pair[0], pair[1]); same || err != nil {
			return whole(a), MergeCounts{}, err
		}
	}
	if same, err := sidesEqual(a, o); same || err != nil {
		return whole(b), MergeCounts{}, err
	}
	t := &mergedText{}
	var err error
	top, counts := mergeChanged(o.doc, a.doc, b.doc, published, func(m *merger, sources [3]*value.Map) value.Value {
		err = mergeItemsFast(m, sources, o, a, b, t)
		return value.NewMap()
	})
	t.top = top
	return t, counts, err
}

// mergeItemsFast is merger.items over split sides, its result the entries
// of t.
func mergeItemsFast(m *merger, sources [3]*value.Map, o, a, b *mergeSide, t *mergedText) error {
	var flagged bool // a source is sensitive somewhere
	for _, s := range sources {
		if s == nil {
			continue
		}
		for i := range s.Len() {
			_, e := s.At(i)
			if entry, isMap := e.(*value.Map); isMap && mapGet(entry, "sensitive") == true {
				flagged = true
			}
		}
	}
	wo, wa, wb := sideWalk{s: o}, sideWalk{s: a}, sideWalk{s: b}
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
		ea, eb, eo := wa.take(k), wb.take(k), wo.take(k)
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
		for _, f := range evidenceFields {
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
