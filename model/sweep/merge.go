package sweep

import (
	"math/big"
	"strings"

	"github.com/stateguard/stateguard/model/value"
)

// MergeCounts is what a three-way merge reports (§21.4).
type MergeCounts struct {
	ItemsMerged, SettledByPublished, CursorsAdvanced, EvidenceDowngrades int
}

// absent stands for a key that is not there: for the three-way rule of
// §21.1 an absent key is a value of its own.
type absent struct{}

// lookup is m[k], or absent{}.
func lookup(m *value.Map, k string) value.Value {
	if m == nil {
		return absent{}
	}
	if v, ok := m.Get(k); ok {
		return v
	}
	return absent{}
}

// sameValue compares two values of which either may be absent{}.
func sameValue(x, y value.Value) bool {
	_, xAbsent := x.(absent)
	_, yAbsent := y.(absent)
	if xAbsent || yAbsent {
		return xAbsent && yAbsent
	}
	return value.Equal(x, y)
}

// put stores v under k unless v is absent{}.
func put(m *value.Map, k string, v value.Value) {
	if _, gone := v.(absent); !gone {
		m.Set(k, v)
	}
}

// Merge is the model of `merge` (§21): the three files as the engine finds
// them, and whether ours is the published side. It answers the status word
// (OK, or the word loading an input gives) and, for OK, the document the
// merge writes (canonical, as after any write) and the counts.
func Merge(base, ours, theirs State, oursPublished bool) (string, *value.Map, MergeCounts) {
	var docs []*value.Map
	for _, st := range []State{base, ours, theirs} {
		doc, word := load(st)
		if word != "" {
			return word, nil, MergeCounts{}
		}
		if doc == nil {
			doc = newDocument()
		}
		docs = append(docs, doc)
	}
	o, a, b := docs[0], docs[1], docs[2]
	mm := modelMerge{oursPublished: oursPublished}
	doc := mm.documents(o, a, b)
	return OK, written(doc), mm.counts
}

type modelMerge struct {
	oursPublished bool
	counts        MergeCounts
}

// versionOf is schema_version as a write would carry it (§2.3).
func versionOf(doc *value.Map) *big.Int {
	n, isInt := lookup(doc, "schema_version").(*big.Int)
	if !isInt || n.Sign() <= 0 || n.Cmp(big.NewInt(1)) == 0 {
		return big.NewInt(1)
	}
	return n
}

func (mm *modelMerge) documents(o, a, b *value.Map) *value.Map {
	if value.Equal(a, b) || value.Equal(o, b) {
		return value.Clone(a).(*value.Map)
	}
	if value.Equal(o, a) {
		return value.Clone(b).(*value.Map)
	}
	out := value.NewMap()
	va, vb := versionOf(a), versionOf(b)
	if va.Cmp(vb) >= 0 {
		out.Set("schema_version", va)
	} else {
		out.Set("schema_version", vb)
	}
	keys := map[string]bool{}
	for _, d := range []*value.Map{o, a, b} {
		for _, k := range d.Keys() {
			keys[k] = true
		}
	}
	for k := range keys {
		if k == "schema_version" {
			continue
		}
		x, y, z := lookup(o, k), lookup(a, k), lookup(b, k)
		switch k {
		case "sources":
			out.Set(k, mm.sources(x, y, z))
		case "items":
			out.Set(k, mm.items(x.(*value.Map), y.(*value.Map), z.(*value.Map)))
		case "last_run":
			put(out, k, mm.lastRun(x, y, z))
		default:
			put(out, k, mm.rule(x, y, z))
		}
	}
	mm.finishItems(out, a, b)
	return out
}

// rule is the three-way rule of §21.1.
func (mm *modelMerge) rule(base, ours, theirs value.Value) value.Value {
	if sameValue(ours, theirs) {
		return ours
	}
	if sameValue(base, ours) {
		return theirs
	}
	if sameValue(base, theirs) {
		return ours
	}
	return mm.published(ours, theirs)
}

func (mm *modelMerge) published(ours, theirs value.Value) value.Value {
	mm.counts.SettledByPublished++
	if mm.oursPublished {
		return ours
	}
	return theirs
}

// mapOrEmpty reads a hand-edited non-map (or a missing value) as {}.
func mapOrEmpty(v value.Value) *value.Map {
	if m, ok := v.(*value.Map); ok {
		return m
	}
	return value.NewMap()
}

func keysOfAll(ms ...*value.Map) []string {
	var keys []string
	seen := map[string]bool{}
	for _, m := range ms {
		for _, k := range m.Keys() {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func (mm *modelMerge) sources(base, ours, theirs value.Value) value.Value {
	if sameValue(ours, theirs) {
		return ours
	}
	o, a, b := mapOrEmpty(base), mapOrEmpty(ours), mapOrEmpty(theirs)
	out := value.NewMap()
	for _, id := range keysOfAll(a, b) {
		ea, eb := lookup(a, id), lookup(b, id)
		if sameValue(ea, eb) {
			out.Set(id, ea)
			continue
		}
		eo := mapOrEmpty(lookup(o, id))
		ma, mb := mapOrEmpty(ea), mapOrEmpty(eb)
		entry := value.NewMap()
		for _, f := range keysOfAll(eo, ma, mb) {
			x, y, z := lookup(eo, f), lookup(ma, f), lookup(mb, f)
			if f == "cursor" {
				put(entry, f, mm.cursor(x, y, z))
			} else {
				put(entry, f, mm.rule(x, y, z))
			}
		}
		out.Set(id, entry)
	}
	return out
}

// isCursor: a null or missing cursor is no cursor (§9.3).
func isCursor(v value.Value) bool {
	if v == nil {
		return false
	}
	_, gone := v.(absent)
	return !gone
}

func (mm *modelMerge) cursor(base, ours, theirs value.Value) value.Value {
	if !isCursor(ours) || !isCursor(theirs) {
		if isCursor(ours) {
			return ours
		}
		if isCursor(theirs) {
			return theirs
		}
		return mm.rule(base, ours, theirs)
	}
	so, st := PyStr(ours), PyStr(theirs)
	switch {
	case CursorLess(st, so):
		mm.counts.CursorsAdvanced++
		return ours
	case CursorLess(so, st):
		mm.counts.CursorsAdvanced++
		return theirs
	}
	return mm.rule(base, ours, theirs)
}

func (mm *modelMerge) items(o, a, b *value.Map) *value.Map {
	out := value.NewMap()
	for _, k := range keysOfAll(a, b) {
		x, y, z := lookup(o, k), lookup(a, k), lookup(b, k)
		_, noA := y.(absent)
		_, noB := z.(absent)
		ma, mapA := y.(*value.Map)
		mb, mapB := z.(*value.Map)
		switch {
		case noA:
			out.Set(k, z)
		case noB:
			out.Set(k, y)
		case sameValue(y, z) || sameValue(x, y) || sameValue(x, z):
			out.Set(k, mm.rule(x, y, z))
		case mapA && mapB:
			mm.counts.ItemsMerged++
			mo := mapOrEmpty(x)
			item := value.NewMap()
			for _, f := range keysOfAll(mo, ma, mb) {
				put(item, f, mm.rule(lookup(mo, f), lookup(ma, f), lookup(mb, f)))
			}
			out.Set(k, item)
		default:
			out.Set(k, mm.published(y, z))
		}
	}
	return out
}

func (mm *modelMerge) lastRun(base, ours, theirs value.Value) value.Value {
	if sameValue(ours, theirs) || sameValue(base, ours) || sameValue(base, theirs) {
		return mm.rule(base, ours, theirs)
	}
	if _, gone := ours.(absent); gone {
		return theirs
	}
	if _, gone := theirs.(absent); gone {
		return ours
	}
	ta, okA := stampOf(ours)
	tb, okB := stampOf(theirs)
	if okA && okB {
		if tb < ta {
			return ours
		}
		if ta < tb {
			return theirs
		}
	}
	return mm.published(ours, theirs)
}

func stampOf(run value.Value) (Instant, bool) {
	m, ok := run.(*value.Map)
	if !ok {
		return 0, false
	}
	s, ok := lookup(m, "timestamp").(string)
	if !ok {
		return 0, false
	}
	return ParseTime(s)
}

// finishItems redacts every item sensitive on ours, on theirs or in the
// result, then downgrades closed items without evidence (§21.3).
func (mm *modelMerge) finishItems(out, a, b *value.Map) {
	items := mapAt(out, "items")
	for _, key := range items.Keys() {
		item := mapAt(items, key)
		if item == nil {
			continue
		}
		item = value.Clone(item).(*value.Map)
		if sensitiveAnywhere(key, []*value.Map{a, b, out}) {
			item.Delete("body")
			item.Delete("quote")
		}
		if lookup(item, "status") == "closed" {
			for _, f := range evidenceFields {
				if v, _ := item.Get(f); !Truthy(v) {
					item.Set("status", "fix_pending")
					mm.counts.EvidenceDowngrades++
					break
				}
			}
		}
		items.Set(key, item)
	}
}

func sensitiveAnywhere(key string, docs []*value.Map) bool {
	parts := strings.Split(key, ":")
	var sources []string
	for i := 1; i < len(parts); i++ {
		sources = append(sources, strings.Join(parts[:i], ":"))
	}
	for _, d := range docs {
		if item := mapAt(mapAt(d, "items"), key); item != nil {
			if isTrue(item, "sensitive") {
				return true
			}
			if s, ok := lookup(item, "source").(string); ok {
				sources = append(sources, s)
			}
		}
	}
	for _, d := range docs {
		srcs := mapAt(d, "sources")
		for _, s := range sources {
			if isTrue(mapAt(srcs, s), "sensitive") {
				return true
			}
		}
	}
	return false
}
