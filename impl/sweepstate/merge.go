package sweepstate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/stateguard/stateguard/internal/codec/isotime"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/storage/durable"
	"github.com/stateguard/stateguard/model/value"
)

// Published names the side of a three-way merge that is already on the
// shared branch: its value settles a field both sides changed differently,
// the lease included (spec/sweep-state.md §21).
type Published int

// The two sides a merge can name as published.
const (
	PublishedOurs Published = iota + 1
	PublishedTheirs
)

// MergeCounts says what a merge did; the sweep-state merge command prints
// them as its payload.
type MergeCounts struct {
	// ItemsMerged: items both sides changed differently, merged field by
	// field.
	ItemsMerged int
	// SettledByPublished: values both sides changed differently that the
	// published side's value settled.
	SettledByPublished int
	// CursorsAdvanced: sources whose two cursors differ in order, where
	// the further was kept.
	CursorsAdvanced int
	// EvidenceDowngrades: closed items of the result without their
	// evidence, made fix_pending.
	EvidenceDowngrades int
}

// payload is the counts as the command prints them.
func (c MergeCounts) payload() *value.Map {
	m := value.NewMap()
	m.Set("items_merged", value.Int(int64(c.ItemsMerged)))
	m.Set("fields_settled_by_published", value.Int(int64(c.SettledByPublished)))
	m.Set("cursors_advanced", value.Int(int64(c.CursorsAdvanced)))
	m.Set("evidence_downgrades", value.Int(int64(c.EvidenceDowngrades)))
	return m
}

// ErrNotAState is returned by MergeDocuments for a document a load would
// refuse: no schema_version (CORRUPT), an items that is not a map, or a
// payload that is not a document at all (such as cursor-get's).
var ErrNotAState = errors.New("sweepstate: not a state document")

// MergeDocuments merges ours and theirs, which both descend from base, by
// the rules of spec/sweep-state.md §21. A document is a Payload as Read
// answers it, or as Payload.UnmarshalJSON reads it; the zero Payload is no
// state, as an absent file is. It is pure: it reads no file and no clock,
// and changes none of its arguments. The result is the document the
// engine would write, as Read answers it from that file: the same values
// in the file's order (MergeTexts gives the file's bytes).
func MergeDocuments(base, ours, theirs Payload, published Published) (Payload, MergeCounts, error) {
	if err := checkPublished(published); err != nil {
		return Payload{}, MergeCounts{}, err
	}
	var sides [3]*value.Map
	for i, p := range []Payload{base, ours, theirs} {
		if p.doc == nil {
			sides[i] = sweepcore.FreshDoc()
			continue
		}
		doc := value.Clone(p.doc).(*value.Map)
		// The rules every command's load applies to the document it read.
		if failed := sweepcore.ApplyLoadRules(doc); failed != nil {
			return Payload{}, MergeCounts{}, fmt.Errorf("%w: %s: %s", ErrNotAState, sideNames[i], failed.Reason)
		}
		sides[i] = doc
	}
	doc, counts := mergeLoaded(sides[0], sides[1], sides[2], published)
	// The file's order is the emitter's; reading its text back gives the
	// document in that order, as a Read of the merged file would.
	written, err := yamlsubset.ParseString(string(yamlsubset.Emit(doc)))
	if err != nil {
		return Payload{}, MergeCounts{}, fmt.Errorf("sweepstate: the merged document does not read back: %w", err)
	}
	return Payload{written}, counts, nil
}

var sideNames = [3]string{"base", "ours", "theirs"}

func checkPublished(p Published) error {
	if p != PublishedOurs && p != PublishedTheirs {
		return fmt.Errorf("%w: Published must be PublishedOurs or PublishedTheirs", ErrInvalidCommand)
	}
	return nil
}

// MergeTexts is MergeDocuments over the three files' texts, read as every
// subcommand reads a state file ("" or only whitespace: no state). It
// answers OK with the counts as payload and the merged text, or the word a
// load gives an input it cannot read (CORRUPT, whose Reason names the
// input first, or ERROR) and no text. It does no I/O.
func MergeTexts(base, ours, theirs string, published Published) (Result, []byte) {
	var b bytes.Buffer
	res, err := writeMerge(base, ours, theirs, published, func(write func(io.Writer) error) error {
		b.Reset()
		b.Grow(max(len(ours), len(theirs)) + 4096)
		return write(&b)
	})
	if res.Word != WordOK {
		return res, nil
	}
	if err != nil {
		// A buffer in memory takes every write.
		return errorResult("cannot write the merged text"), nil
	}
	return res, b.Bytes()
}

// writeMerge merges three texts and, when the answer is OK, writes the
// merged text with to, which hands its function a writer for the whole
// text (once, or a second time, on a fresh writer, when the fast path
// finds as it writes that it cannot decide); an error is to's. Texts in
// the engine's own form take the fast path (mergeTextsFast), which gives
// the same answer and bytes as the general path and writes as it merges.
func writeMerge(base, ours, theirs string, published Published, to func(func(io.Writer) error) error) (Result, error) {
	if err := checkPublished(published); err != nil {
		return Result{Word: WordError, Reason: "Published: not a side", Err: err}, nil
	}
	res, fast, decided := mergeTextsFast(base, ours, theirs, published)
	if decided && fast == nil {
		return res, nil
	}
	if decided {
		var counts MergeCounts
		err := to(func(w io.Writer) (err error) {
			counts, err = fast.writeTo(w)
			return err
		})
		if !errors.Is(err, errNotSplit) {
			return ok(counts.payload()), err
		}
	}
	return writeWhole(base, ours, theirs, published, to)
}

// writeWhole is writeMerge's general path, taken when the fast path
// cannot decide (a defect of the split, errNotSplit): the merge of the
// texts parsed whole, written with to when the answer is OK; to is not
// called for an input that cannot be read.
func writeWhole(base, ours, theirs string, published Published, to func(func(io.Writer) error) error) (Result, error) {
	res, doc := mergeTextsWhole(base, ours, theirs, published)
	if doc == nil {
		return res, nil
	}
	return res, to(func(w io.Writer) error { return yamlsubset.EmitTo(w, doc) })
}

// mergeTextsWhole is the merge of three texts parsed whole: the general
// path, taken when the fast path declines, and its test's oracle.
func mergeTextsWhole(base, ours, theirs string, published Published) (Result, *value.Map) {
	var docs [3]*value.Map
	for i, text := range []string{base, ours, theirs} {
		doc, failed := loadText(text)
		if failed != nil {
			res := *failed
			if res.Word == WordCorrupt {
				res.Reason = sideNames[i] + ": " + res.Reason
			}
			return res, nil
		}
		docs[i] = doc
	}
	doc, counts := mergeLoaded(docs[0], docs[1], docs[2], published)
	return ok(counts.payload()), doc
}

// Merge merges the state files at base and theirs into the one at ours
// (git's merge-driver convention), holding ours' lock from before it is
// read until after the write, and writes it durably, as every subcommand
// writes. A missing file is no state. An input that cannot be read answers
// its word (CORRUPT, or ERROR for an items that is not a map) and ours
// is left as it was.
func (e *Engine) Merge(base, ours, theirs string, published Published) Result {
	return e.merge(base, ours, theirs, published, true)
}

// MergeUnlocked is Merge without ours' lock, for an ours no other writer
// can know: the temporary copy git hands a merge driver, whose lock file
// would stay behind in the working tree.
func (e *Engine) MergeUnlocked(base, ours, theirs string, published Published) Result {
	return e.merge(base, ours, theirs, published, false)
}

func (e *Engine) merge(base, ours, theirs string, published Published, locked bool) Result {
	if err := checkPublished(published); err != nil {
		return Result{Word: WordError, Reason: "Published: not a side", Err: err}
	}
	for i, p := range []string{base, ours, theirs} {
		if err := sweeprules.CheckText(p); err != nil {
			return invalid("Merge."+sideNames[i], err)
		}
	}
	target, err := durable.ResolveLink(ours)
	if err != nil {
		return errorResult("cannot follow the state file's symbolic link")
	}
	ours = target
	if err := durable.EnsureParent(ours); err != nil {
		return errorResult("cannot create the state file's parent directory")
	}
	if locked {
		lock, err := durable.Acquire(durable.LockPath(ours))
		if err != nil {
			return errorResult("cannot lock the state file")
		}
		defer lock.Unlock()
	}
	var texts [3]string
	for i, p := range []string{base, ours, theirs} {
		text, failed := readInput(p)
		if failed != nil {
			res := *failed
			res.Reason = sideNames[i] + ": " + res.Reason
			return res
		}
		texts[i] = text
	}
	// Streamed: the new text is never held whole beside the three.
	res, err := writeMerge(texts[0], texts[1], texts[2], published, func(write func(io.Writer) error) error {
		return durable.WriteFileFunc(ours, write)
	})
	if err != nil {
		return errorResult("cannot write the state file")
	}
	return res
}

// readInput reads one input of a merge as a load reads the state file; an
// absent file is "".
func readInput(path string) (string, *Result) {
	f, fi, failed := open(path)
	if failed != nil {
		return "", failed
	}
	if f == nil {
		return "", nil
	}
	defer f.Close()
	return readText(f, fi)
}

// opt is a value that may be absent (an absent key is a value of its own
// for the three-way rule).
type opt struct {
	v  value.Value
	ok bool
}

func optAt(m *value.Map, k string) opt {
	if m == nil {
		return opt{}
	}
	v, ok := m.Get(k)
	return opt{v, ok}
}

func (x opt) same(y opt) bool { return x.ok == y.ok && (!x.ok || value.Equal(x.v, y.v)) }

// merger holds what every rule of one merge needs.
type merger struct {
	published Published
	counts    MergeCounts
}

// pick is the published side's value of a and b.
func (m *merger) pick(a, b opt) opt {
	m.counts.SettledByPublished++
	if m.published == PublishedOurs {
		return a
	}
	return b
}

// threeWay: a change on one side is taken; a change on both sides, if
// different, goes to the published side.
func (m *merger) threeWay(o, a, b opt) opt {
	switch {
	case a.same(b), b.same(o):
		return a
	case a.same(o):
		return b
	}
	return m.pick(a, b)
}

// mergeLoaded merges three loaded documents (sources and items present,
// items a map); it changes none of them, though the result shares values
// with them.
func mergeLoaded(o, a, b *value.Map, published Published) (*value.Map, MergeCounts) {
	// A side that changed nothing leaves nothing to merge.
	switch {
	case value.Equal(a, b), value.Equal(b, o):
		return withVersion(a, writtenVersion(a)), MergeCounts{}
	case value.Equal(a, o):
		return withVersion(b, writtenVersion(b)), MergeCounts{}
	}
	return mergeChanged(o, a, b, published, func(m *merger, sources [3]*value.Map) value.Value {
		return m.items(sweepcore.MapAt(o, "items"), sweepcore.MapAt(a, "items"), sweepcore.MapAt(b, "items"), sources)
	})
}

// mergeChanged is mergeLoaded where no side is the result whole: the top
// level merged key by key, the items by mergeItems (given the merger and
// ours', theirs' and the result's sources).
func mergeChanged(o, a, b *value.Map, published Published, mergeItems func(*merger, [3]*value.Map) value.Value) (*value.Map, MergeCounts) {
	m := &merger{published: published}
	out := value.NewMap()
	version := writtenVersion(a)
	if vb := writtenVersion(b); vb.Cmp(version) > 0 {
		version = vb
	}
	out.Set("schema_version", version)
	// Sources first: redaction, in the items' merge, reads the result's.
	mergedSources := m.sources(optAt(o, "sources"), optAt(a, "sources"), optAt(b, "sources"))
	var sourceMaps [3]*value.Map
	sourceMaps[0], _ = sweepcore.SourcesOf(a)
	sourceMaps[1], _ = sweepcore.SourcesOf(b)
	sourceMaps[2], _ = mergedSources.(*value.Map)
	for _, k := range unionKeys(o, a, b) {
		var r opt
		switch k {
		case "schema_version":
			continue
		case "sources":
			r = opt{mergedSources, true}
		case "items":
			r = opt{mergeItems(m, sourceMaps), true}
		case "last_run":
			r = m.lastRun(optAt(o, k), optAt(a, k), optAt(b, k))
		default: // the lease and any other key
			r = m.threeWay(optAt(o, k), optAt(a, k), optAt(b, k))
		}
		if r.ok {
			out.Set(k, r.v)
		}
	}
	return out, m.counts
}

// writtenVersion is the schema_version a write of doc carries (§2.3).
func writtenVersion(doc *value.Map) *big.Int {
	if n, isInt := sweepcore.MapGet(doc, "schema_version").(*big.Int); isInt && n.Cmp(big.NewInt(1)) > 0 {
		return n
	}
	return big.NewInt(1)
}

// withVersion is a copy of doc's top level with its schema_version set.
func withVersion(doc *value.Map, version *big.Int) *value.Map {
	out := shallowCopy(doc)
	out.Set("schema_version", version)
	return out
}

func shallowCopy(m *value.Map) *value.Map {
	out := value.NewMapSize(m.Len())
	for i := range m.Len() {
		k, v := m.At(i)
		out.Set(k, v)
	}
	return out
}

// unionKeys lists the keys of the maps (nil ones skipped), each once, in
// first-seen order.
func unionKeys(maps ...*value.Map) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range maps {
		if m == nil {
			continue
		}
		for i := range m.Len() {
			k, _ := m.At(i)
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// asMap is v as a map; anything else (absent, a hand-edited scalar)
// counts as an empty map.
func asMap(x opt) *value.Map {
	if m, isMap := x.v.(*value.Map); isMap && x.ok {
		return m
	}
	return value.NewMap()
}

// sources keeps every source of either side and merges each entry field
// by field, its cursor by order.
func (m *merger) sources(o, a, b opt) value.Value {
	if a.same(b) {
		return a.v
	}
	so, sa, sb := asMap(o), asMap(a), asMap(b)
	out := value.NewMap()
	for _, id := range unionKeys(sa, sb) {
		eo, ea, eb := optAt(so, id), optAt(sa, id), optAt(sb, id)
		if ea.same(eb) {
			out.Set(id, ea.v)
			continue
		}
		mo, ma, mb := asMap(eo), asMap(ea), asMap(eb)
		entry := value.NewMap()
		for _, f := range unionKeys(mo, ma, mb) {
			fo, fa, fb := optAt(mo, f), optAt(ma, f), optAt(mb, f)
			var r opt
			if f == "cursor" {
				r = m.cursor(fo, fa, fb)
			} else {
				r = m.threeWay(fo, fa, fb)
			}
			if r.ok {
				entry.Set(f, r.v)
			}
		}
		out.Set(id, entry)
	}
	return out
}

// cursor is the further of two cursors (§9.3 order); one side's cursor is
// never dropped.
func (m *merger) cursor(o, a, b opt) opt {
	hasA, hasB := a.ok && a.v != nil, b.ok && b.v != nil
	switch {
	case hasA && hasB:
		ca, cb := sweepcore.PyStr(a.v), sweepcore.PyStr(b.v)
		if sweepcore.CursorLess(ca, cb) {
			m.counts.CursorsAdvanced++
			return b
		}
		if sweepcore.CursorLess(cb, ca) {
			m.counts.CursorsAdvanced++
			return a
		}
	case hasA:
		return a
	case hasB:
		return b
	}
	return m.threeWay(o, a, b)
}

// items keeps every item of either side; an item both sides changed
// differently is merged field by field when both hold a map. Each item of
// the result is then redacted and validated (finish).
func (m *merger) items(o, a, b *value.Map, sources [3]*value.Map) *value.Map {
	out := value.NewMapSize(a.Len() + b.Len()/16)
	// Walked by position, ours' keys then theirs' new ones: no set of the
	// union is built.
	for i := range a.Len() {
		k, v := a.At(i)
		ia, ib := opt{v, true}, optAt(b, k)
		out.Set(k, m.finish(k, m.item(ia, ib, func() opt { return optAt(o, k) }), ia, ib, sources))
	}
	for i := range b.Len() {
		k, v := b.At(i)
		if a.Has(k) {
			continue
		}
		ib := opt{v, true}
		out.Set(k, m.finish(k, ib.v, opt{}, ib, sources))
	}
	return out
}

// item merges an item present on ours (ia); theirs may lack it. The
// base's (base) is looked up only when the sides differ: most items are
// the same on both.
func (m *merger) item(ia, ib opt, base func() opt) value.Value {
	if !ib.ok || ia.same(ib) {
		return ia.v
	}
	io := base()
	switch {
	case ib.same(io):
		return ia.v
	case ia.same(io):
		return ib.v
	}
	ma, isMapA := ia.v.(*value.Map)
	mb, isMapB := ib.v.(*value.Map)
	if !isMapA || !isMapB {
		return m.pick(ia, ib).v
	}
	m.counts.ItemsMerged++
	mo := asMap(io)
	item := value.NewMap()
	for _, f := range unionKeys(mo, ma, mb) {
		if r := m.threeWay(optAt(mo, f), optAt(ma, f), optAt(mb, f)); r.ok {
			item.Set(f, r.v)
		}
	}
	return item
}

// lastRun: both changed differently, the later readable timestamp wins,
// else the published side's; one side's record is never removed by the
// other's lack of one.
func (m *merger) lastRun(o, a, b opt) opt {
	switch {
	case a.same(b), b.same(o):
		return a
	case a.same(o):
		return b
	case !a.ok:
		return b
	case !b.ok:
		return a
	}
	ta, okA := runStamp(a.v)
	tb, okB := runStamp(b.v)
	if okA && okB && ta != tb {
		if ta > tb {
			return a
		}
		return b
	}
	return m.pick(a, b)
}

func runStamp(v value.Value) (isotime.Instant, bool) {
	run, isMap := v.(*value.Map)
	if !isMap {
		return 0, false
	}
	text, isString := sweepcore.MapGet(run, "timestamp").(string)
	if !isString {
		return 0, false
	}
	return isotime.Parse(text)
}

// finish drops body and quote from an item sensitive on either side or
// in the result, then downgrades a closed item that lacks evidence, as
// validate does. The item is copied before it changes.
func (m *merger) finish(key string, merged value.Value, ia, ib opt, sources [3]*value.Map) value.Value {
	item, isMap := merged.(*value.Map)
	if !isMap {
		return merged
	}
	fixed := item
	if (item.Has("body") || item.Has("quote")) && sensitiveItem(key, [3]value.Value{ia.v, ib.v, item}, sources) {
		fixed = shallowCopy(item)
		fixed.Delete("body")
		fixed.Delete("quote")
	}
	if status, _ := fixed.Get("status"); status == "closed" {
		for _, f := range sweepcore.EvidenceFields {
			if v, _ := fixed.Get(f); !sweepcore.Truthy(v) {
				if fixed == item {
					fixed = shallowCopy(item)
				}
				fixed.Set("status", "fix_pending")
				m.counts.EvidenceDowngrades++
				break
			}
		}
	}
	return fixed
}

// sensitiveItem: the item's own sensitive is true on a side or in the
// result (items), or an entry of one of its sources is, in ours', theirs'
// or the result's sources (its sources: the source field of the item
// wherever it is a string, and every prefix of the key that ends before a
// colon).
func sensitiveItem(key string, items [3]value.Value, sources [3]*value.Map) bool {
	var names []string
	for i := range len(key) {
		if key[i] == ':' {
			names = append(names, key[:i])
		}
	}
	for _, v := range items {
		item, isMap := v.(*value.Map)
		if !isMap {
			continue
		}
		if sweepcore.MapGet(item, "sensitive") == true {
			return true
		}
		if src, isString := sweepcore.MapGet(item, "source").(string); isString {
			names = append(names, src)
		}
	}
	for _, m := range sources {
		if m == nil {
			continue
		}
		for _, name := range names {
			if entry, isMap := sweepcore.GetMap(m, name); isMap && sweepcore.MapGet(entry, "sensitive") == true {
				return true
			}
		}
	}
	return false
}

// ParsePublished reads the side names the command line takes.
func ParsePublished(s string) (Published, bool) {
	switch s {
	case "ours":
		return PublishedOurs, true
	case "theirs":
		return PublishedTheirs, true
	}
	return 0, false
}
