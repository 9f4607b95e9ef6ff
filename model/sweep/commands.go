package sweep

import (
	"math/big"
	"sort"

	"github.com/stateguard/stateguard/model/value"
)

// Each command below works on the loaded document (nil for an absent or
// blank file), changes it in place when it writes, and says so in
// Result.Wrote. Commands that may create the file return the document.

// read answers the whole loaded document (§11).
func read(doc *value.Map) Result {
	if doc == nil {
		return Result{Word: NoState}
	}
	return Result{Word: OK, Payload: doc}
}

// evidenceFields must all be truthy on a closed item (§4.1).
var evidenceFields = []string{"fix_ref", "verified_revision_id", "verified_at"}

// validate downgrades closed items lacking evidence to fix_pending (§4.3); it
// ignores the lease and writes only when something changed.
func validate(doc *value.Map) Result {
	downgraded := []string{}
	if doc != nil {
		items := mapAt(doc, "items")
		for _, key := range items.Keys() {
			item := mapAt(items, key)
			if item == nil {
				continue
			}
			if status, _ := item.Get("status"); status != "closed" {
				continue
			}
			for _, f := range evidenceFields {
				if v, _ := item.Get(f); !Truthy(v) {
					item.Set("status", "fix_pending")
					downgraded = append(downgraded, key)
					break
				}
			}
		}
	}
	sort.Strings(downgraded)
	list := make([]value.Value, len(downgraded))
	for i, k := range downgraded {
		list[i] = k
	}
	return Result{Word: OK, Payload: payload("downgraded", list), Wrote: len(list) > 0}
}

// leaseHolder returns the writer of a held lease: lease must be a map with a
// truthy writer (§7.2).
func leaseHolder(doc *value.Map) (value.Value, bool) {
	lease := mapAt(doc, "lease")
	if lease == nil {
		return nil, false
	}
	w, _ := lease.Get("writer")
	return w, Truthy(w)
}

// holds reports whether writer holds the lease; an absent file holds none.
func holds(doc *value.Map, writer string) bool {
	w, held := leaseHolder(doc)
	return held && w == writer
}

// restamp keeps a holder's lease alive on an owned write (§7.4).
func restamp(doc *value.Map, now string) {
	mapAt(doc, "lease").Set("timestamp", now)
}

// upsertItem overlays the given keys on the stored item, forces source and
// id, redacts sensitive text and re-stamps the lease (§5, §6, §7.4).
func upsertItem(doc *value.Map, c UpsertItem) Result {
	if doc == nil || !holds(doc, c.Writer) {
		return Result{Word: LeaseLost}
	}
	// The JSON is judged after the file and the lease (a decision the
	// contract leaves open): CORRUPT, then LEASE-LOST, then ERROR.
	incoming, isMap := c.Item.Value.(*value.Map)
	if !c.Item.OK || !isMap {
		return Result{Word: Error}
	}
	if badSources(doc) {
		return Result{Word: Error}
	}
	items := mapAt(doc, "items")
	key := c.Source + ":" + c.ID
	item := mapAt(items, key) // a non-map value counts as an empty item
	if item == nil {
		item = value.NewMap()
	}
	for _, k := range incoming.Keys() {
		v, _ := incoming.Get(k)
		item.Set(k, value.Clone(v))
	}
	item.Set("source", c.Source)
	item.Set("id", c.ID)
	if isTrue(item, "sensitive") || isTrue(mapAt(mapAt(doc, "sources"), c.Source), "sensitive") {
		item.Delete("body")
		item.Delete("quote")
	}
	items.Set(key, item)
	restamp(doc, c.Now)
	return Result{Word: OK, Wrote: true}
}

// isTrue reports whether m[k] is the JSON value true; "true" and 1 do not
// count (§5).
func isTrue(m *value.Map, k string) bool {
	if m == nil {
		return false
	}
	v, _ := m.Get(k)
	b, ok := v.(bool)
	return ok && b
}

// cursorGet answers the stored cursor, null when there is none (§9.1). A
// source entry that is not a map has no cursor (a model decision).
func cursorGet(doc *value.Map, c CursorGet) Result {
	if badSources(doc) {
		return Result{Word: Error}
	}
	var cursor value.Value
	if entry := mapAt(mapAt(doc, "sources"), c.Source); entry != nil {
		cursor, _ = entry.Get("cursor")
	}
	return Result{Word: OK, Payload: payload("cursor", cursor)}
}

// storedCursor is the source's cursor as text, or false when it has none (a
// missing entry or key, or null). A non-string cursor (a hand edit) is
// compared through its Python str() (a model decision).
func storedCursor(sources *value.Map, source string) (string, bool) {
	entry := mapAt(sources, source)
	if entry == nil {
		return "", false
	}
	v, _ := entry.Get("cursor")
	if v == nil {
		return "", false
	}
	return PyStr(v), true
}

// setCursor stores cursor on the source entry, creating the entry (or
// replacing a non-map one) when needed. cursor-advance stores its string;
// import-legacy the legacy value as it is.
func setCursor(sources *value.Map, source string, cursor value.Value) {
	entry := mapAt(sources, source)
	if entry == nil {
		entry = value.NewMap()
	}
	entry.Set("cursor", cursor)
	sources.Set(source, entry)
}

// cursorAdvance moves a source's cursor past a recorded item, never
// backwards (§9.2).
func cursorAdvance(doc *value.Map, c CursorAdvance) Result {
	if doc == nil || !holds(doc, c.Writer) {
		return Result{Word: LeaseLost}
	}
	if !mapAt(doc, "items").Has(c.Source + ":" + c.PastItem) {
		return Result{Word: Refused}
	}
	if badSources(doc) || badEntry(mapAt(doc, "sources"), c.Source) {
		return Result{Word: Error}
	}
	sources := mapAt(doc, "sources")
	if cur, ok := storedCursor(sources, c.Source); ok && CursorLess(c.To, cur) {
		return Result{Word: Refused}
	}
	setCursor(sources, c.Source, c.To)
	restamp(doc, c.Now)
	return Result{Word: OK, Wrote: true}
}

// defaultTTL is the lease TTL in minutes when none is given or usable.
var defaultTTL = big.NewInt(60)

// leaseAcquire takes a free, own or provably stale lease (§7.3).
func leaseAcquire(doc *value.Map, c LeaseAcquire) (Result, *value.Map) {
	if doc == nil {
		doc = newDocument()
	}
	res := Result{Word: OK, Wrote: true}
	if w, held := leaseHolder(doc); held && w != c.Writer {
		lease := mapAt(doc, "lease")
		if !provablyStale(lease, c.Now) {
			return Result{Word: Locked}, doc
		}
		ts, _ := lease.Get("timestamp")
		res = Result{Word: StaleReclaimed, Payload: payload("previous_writer", w, "previous_timestamp", ts), Wrote: true}
	}
	ttl := defaultTTL
	if c.TTLMinutes != nil {
		ttl = c.TTLMinutes
	}
	doc.Set("lease", payload("writer", c.Writer, "timestamp", c.Now, "ttl_minutes", new(big.Int).Set(ttl)))
	return res, doc
}

// provablyStale is true only when both times parse and now minus the lease
// timestamp exceeds the lease's own TTL strictly (§7.5, §7.6). The TTL is
// converted like Python's int(), falling back to 60.
func provablyStale(lease *value.Map, now string) bool {
	tsText, ok := lease.Get("timestamp")
	ts, isString := tsText.(string)
	if !ok || !isString {
		return false
	}
	stamped, ok1 := ParseTime(ts)
	current, ok2 := ParseTime(now)
	if !ok1 || !ok2 {
		return false
	}
	ttl := defaultTTL
	if raw, ok := lease.Get("ttl_minutes"); ok {
		if n, ok := PyInt(raw); ok {
			ttl = n
		}
	}
	limit := new(big.Int).Mul(ttl, big.NewInt(60*microsPerSecond))
	elapsed := big.NewInt(int64(current) - int64(stamped))
	return elapsed.Cmp(limit) > 0
}

// leaseRelease drops the caller's lease (§7.4).
func leaseRelease(doc *value.Map, c LeaseRelease) Result {
	w, held := leaseHolder(doc)
	switch {
	case !held:
		return Result{Word: OK}
	case w != c.Writer:
		return Result{Word: LeaseLost}
	}
	doc.Delete("lease")
	return Result{Word: OK, Wrote: true}
}

// runRecord replaces last_run, ignoring the lease (§10). Counts that did not
// decode become {}.
func runRecord(doc *value.Map, c RunRecord) (Result, *value.Map) {
	if doc == nil {
		doc = newDocument()
	}
	var counts value.Value = value.NewMap()
	if c.Counts.OK {
		counts = value.Clone(c.Counts.Value)
	}
	doc.Set("last_run", payload("timestamp", c.Timestamp, "outcome", c.Outcome, "writer", c.Writer, "counts", counts))
	return Result{Word: OK, Wrote: true}, doc
}

// legacyFields are copied from a legacy item, in this order, into the
// stored field named second, only where the stored item lacks that key.
var legacyFields = [][2]string{
	{"status", "status"}, {"source", "source"}, {"channel", "source"}, {"title", "title"}, {"url", "url"},
}

// importLegacy brings cursors and items of a legacy file in, best effort
// (§12). It writes when the file was absent (or blank) or anything was
// imported.
func importLegacy(doc *value.Map, c ImportLegacy) (Result, *value.Map) {
	created := doc == nil
	if created {
		doc = newDocument()
	}
	legacy, _ := c.Legacy.Value.(*value.Map)
	if !c.Legacy.OK {
		legacy = nil
	}
	sourceMap, _ := c.SourceMap.Value.(*value.Map)
	if !c.SourceMap.OK {
		sourceMap = nil // absent, not JSON, or not an object: unmapped
	}
	cursors, failed := importCursors(doc, mapAt(legacy, "channels"), sourceMap)
	if failed {
		return Result{Word: Error}, nil
	}
	var legacyItems value.Value
	if legacy != nil {
		legacyItems, _ = legacy.Get("items")
	}
	items := importItems(mapAt(doc, "items"), legacyItems)
	res := Result{
		Word:    OK,
		Payload: payload("cursors_imported", value.Int(int64(cursors)), "items_imported", value.Int(int64(items))),
		Wrote:   created || cursors+items > 0,
	}
	return res, doc
}

// importCursors sets each channel's `last_processed_ts or cursor` (Python's
// or) as its source's cursor unless that would move it backwards. Only a
// null result skips the channel: "", false and 0 are imported, and every
// value is stored as it is (1.5 stays a number), as the reference does. The
// ordering compares through Python str() (a model decision: the
// reference's comparison of a non-string candidate is not recorded).
//
// A channel that reaches its source while sources is not a map, or while
// that source's entry is not a map, fails the call (failed), as in the
// reference.
func importCursors(doc, channels, sourceMap *value.Map) (n int, failed bool) {
	sources := mapAt(doc, "sources")
	for _, ch := range keysOf(channels) {
		entry := mapAt(channels, ch)
		if entry == nil {
			continue
		}
		cur, _ := entry.Get("last_processed_ts")
		if !Truthy(cur) {
			cur, _ = entry.Get("cursor")
		}
		if cur == nil {
			continue
		}
		name := ch
		if mapped, ok := sourceMapGet(sourceMap, ch); ok {
			name = PyStr(mapped)
		}
		if sources == nil || badEntry(sources, name) {
			return 0, true
		}
		if old, ok := storedCursor(sources, name); ok && CursorLess(PyStr(cur), old) {
			continue
		}
		setCursor(sources, name, value.Clone(cur))
		n++
	}
	return n, false
}

func sourceMapGet(m *value.Map, k string) (value.Value, bool) {
	if m == nil {
		return nil, false
	}
	return m.Get(k)
}

// importItems fills stored items (under the bare legacy id) from a legacy
// map of id to fields, or a list of maps with a truthy id.
func importItems(items *value.Map, legacyItems value.Value) int {
	n := 0
	fill := func(id string, fields *value.Map) {
		target := mapAt(items, id) // a non-map value counts as an empty item
		if target == nil {
			target = value.NewMap()
		}
		for _, f := range legacyFields {
			v, ok := fields.Get(f[0])
			if ok && v != nil && !target.Has(f[1]) {
				target.Set(f[1], value.Clone(v))
			}
		}
		items.Set(id, target)
		n++
	}
	switch t := legacyItems.(type) {
	case *value.Map:
		for _, id := range t.Keys() {
			if fields := mapAt(t, id); id != "" && fields != nil {
				fill(id, fields)
			}
		}
	case []value.Value:
		for _, e := range t {
			fields, ok := e.(*value.Map)
			if !ok {
				continue
			}
			if id, _ := fields.Get("id"); Truthy(id) {
				fill(PyStr(id), fields)
			}
		}
	}
	return n
}

// keysOf lists the keys of m; none for nil.
func keysOf(m *value.Map) []string {
	if m == nil {
		return nil
	}
	return m.Keys()
}
