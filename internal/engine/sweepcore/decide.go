package sweepcore

import (
	"errors"
	"math/big"
	"slices"

	"github.com/stateguard/stateguard/internal/codec/isotime"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// input is everything a decision may look at: no files, no clock.
type input struct {
	loaded
	now string
	// legacy is import-legacy's file, parsed (its doc nil: absent,
	// unreadable or not a mapping).
	legacy legacyFile
	// splitOff holds the items the load left out (nil when it loaded
	// them all): for import-legacy, items its file names that already
	// have every field it could add (legacyTouches).
	splitOff *yamlsubset.Split
}

// decide applies cmd to the loaded document in place and reports the answer
// and whether the document must be written.
func decide(in input, cmd Command) (Result, bool) {
	switch c := cmd.(type) {
	case Read:
		if in.fresh {
			return Result{Word: WordNoState}, false
		}
		return Result{Word: WordOK, Payload: in.doc}, false
	case CursorGet:
		return cursorGet(in, c), false
	case Metrics:
		return countMetrics(in), false
	case Validate:
		return validate(in)
	case UpsertItem:
		return upsertItem(in, c)
	case CursorAdvance:
		return cursorAdvance(in, c)
	case LeaseAcquire:
		return leaseAcquire(in, c)
	case LeaseRelease:
		return leaseRelease(in, c)
	case RunRecord:
		return runRecord(in, c)
	case ImportLegacy:
		return importLegacy(in, c)
	}
	return invalid("Command", ErrNotACommand), false
}

func ok(payload *value.Map) Result { return Result{Word: WordOK, Payload: payload} }

func single(k string, v value.Value) *value.Map {
	m := value.NewMap()
	m.Set(k, v)
	return m
}

func cursorGet(in input, c CursorGet) Result {
	sources, isMap := sourcesOf(in.doc)
	if !isMap {
		return errBadSources
	}
	var cursor value.Value
	if src, isMap := getMap(sources, c.Source); isMap {
		cursor, _ = src.Get("cursor")
	}
	return ok(single("cursor", cursor))
}

// evidenceFields must all be truthy for an item to stay closed (spec/sweep-state.md §4.1).
var evidenceFields = []string{"fix_ref", "verified_revision_id", "verified_at"}

func validate(in input) (Result, bool) {
	var downgraded []string
	items := mapAt(in.doc, "items")
	for _, k := range items.Keys() {
		item, isMap := getMap(items, k)
		if !isMap {
			continue
		}
		if status, _ := item.Get("status"); status != "closed" {
			continue
		}
		for _, f := range evidenceFields {
			if v, _ := item.Get(f); !truthy(v) {
				item.Set("status", "fix_pending")
				downgraded = append(downgraded, k)
				break
			}
		}
	}
	slices.Sort(downgraded)
	list := make([]value.Value, len(downgraded))
	for i, k := range downgraded {
		list[i] = k
	}
	return ok(single("downgraded", list)), len(downgraded) > 0
}

// heldBy returns the lease map when writer holds it.
func heldBy(doc *value.Map, writer string) (*value.Map, bool) {
	lease, isMap := getMap(doc, "lease")
	if !isMap {
		return nil, false
	}
	w, _ := lease.Get("writer")
	return lease, w == writer && writer != ""
}

func upsertItem(in input, c UpsertItem) (Result, bool) {
	// An absent or blank file has no lease, so it is never held.
	lease, held := heldBy(in.doc, c.Writer)
	if !held {
		return Result{Word: WordLeaseLost}, false
	}
	parsed, err := pyjson.Decode(c.JSON)
	if err != nil {
		if errors.Is(err, pyjson.ErrNonFinite) {
			return refusedText("--json holds NaN or Infinity"), false
		}
		return refusedText("--json is not valid JSON"), false
	}
	incoming, isMap := parsed.(*value.Map)
	if !isMap {
		return refusedText("--json is not a JSON object"), false
	}
	if _, isMap := sourcesOf(in.doc); !isMap {
		return errBadSources, false
	}
	items := mapAt(in.doc, "items")
	key := c.Source + ":" + c.ID
	item, isMap := getMap(items, key)
	if !isMap {
		item = value.NewMap()
	}
	for _, k := range incoming.Keys() {
		v, _ := incoming.Get(k)
		item.Set(k, v)
	}
	item.Set("source", c.Source)
	item.Set("id", c.ID)
	if isSensitive(in.doc, item, c.Source) {
		item.Delete("body")
		item.Delete("quote")
	}
	items.Set(key, item)
	lease.Set("timestamp", in.now)
	return ok(nil), true
}

// isSensitive: only the boolean true counts, on the item or its source.
func isSensitive(doc, item *value.Map, source string) bool {
	if v, _ := item.Get("sensitive"); v == true {
		return true
	}
	if src, isMap := getMap(mapAt(doc, "sources"), source); isMap {
		if v, _ := src.Get("sensitive"); v == true {
			return true
		}
	}
	return false
}

func cursorAdvance(in input, c CursorAdvance) (Result, bool) {
	// An absent or blank file has no lease, so it is never held.
	lease, held := heldBy(in.doc, c.Writer)
	if !held {
		return Result{Word: WordLeaseLost}, false
	}
	if !mapAt(in.doc, "items").Has(c.Source + ":" + c.PastItem) {
		return Result{Word: WordRefused}, false
	}
	sources, isMap := sourcesOf(in.doc)
	if !isMap {
		return errBadSources, false
	}
	src, isMap := getMap(sources, c.Source)
	if !isMap && sources.Has(c.Source) {
		return errBadSourceEntry, false
	}
	if isMap {
		if cur, _ := src.Get("cursor"); cur != nil && cursorLess(c.To, pyStr(cur)) {
			return Result{Word: WordRefused}, false
		}
	} else {
		src = value.NewMap()
		sources.Set(c.Source, src)
	}
	src.Set("cursor", c.To)
	lease.Set("timestamp", in.now)
	return ok(nil), true
}

// defaultTTL is the lease TTL in minutes when none is given or usable.
var defaultTTL = big.NewInt(60)

func leaseAcquire(in input, c LeaseAcquire) (Result, bool) {
	ttl := defaultTTL
	if c.TTLMinutes != nil {
		ttl = c.TTLMinutes
	}
	fresh := value.NewMap()
	fresh.Set("writer", c.Writer)
	fresh.Set("timestamp", in.now)
	fresh.Set("ttl_minutes", new(big.Int).Set(ttl))

	old, isMap := getMap(in.doc, "lease")
	var holder value.Value
	if isMap {
		holder, _ = old.Get("writer")
	}
	if !isMap || !truthy(holder) || holder == c.Writer {
		in.doc.Set("lease", fresh)
		return ok(nil), true
	}
	if !provablyStale(old, in.now) {
		return Result{Word: WordLocked}, false
	}
	prevTS, _ := old.Get("timestamp")
	payload := value.NewMap()
	payload.Set("previous_writer", holder)
	payload.Set("previous_timestamp", prevTS)
	in.doc.Set("lease", fresh)
	return Result{Word: WordStaleReclaimed, Payload: payload}, true
}

// microsPerMinute converts the TTL for the exact comparison.
var microsPerMinute = big.NewInt(60_000_000)

// provablyStale: both times parse and now - timestamp > ttl minutes, exactly.
func provablyStale(lease *value.Map, now string) bool {
	tsText, isString := mapGet(lease, "timestamp").(string)
	if !isString {
		return false
	}
	ts, okTS := isotime.Parse(tsText)
	nowT, okNow := isotime.Parse(now)
	if !okTS || !okNow {
		return false
	}
	ttl, usable := pyInt(mapGet(lease, "ttl_minutes"))
	if !usable {
		ttl = defaultTTL
	}
	elapsed := big.NewInt(int64(nowT - ts))
	limit := new(big.Int).Mul(ttl, microsPerMinute)
	return elapsed.Cmp(limit) > 0
}

func leaseRelease(in input, c LeaseRelease) (Result, bool) {
	if in.fresh {
		return ok(nil), false
	}
	lease, isMap := getMap(in.doc, "lease")
	if !isMap || !truthy(mapGet(lease, "writer")) {
		return ok(nil), false
	}
	if mapGet(lease, "writer") != c.Writer {
		return Result{Word: WordLeaseLost}, false
	}
	in.doc.Delete("lease")
	return ok(nil), true
}

func runRecord(in input, c RunRecord) (Result, bool) {
	var counts value.Value
	if v, err := pyjson.Decode(c.Counts); err == nil {
		counts = v
	} else {
		counts = value.NewMap() // the reference replaces bad counts with {}
	}
	last := value.NewMap()
	last.Set("timestamp", c.Timestamp)
	last.Set("outcome", c.Outcome)
	last.Set("writer", c.Writer)
	last.Set("counts", counts)
	in.doc.Set("last_run", last)
	return ok(nil), true
}

// legacyItemFields are copied from a legacy item into a stored one that
// lacks them; "channel" is stored as "source".
var legacyItemFields = []struct{ from, to string }{
	{"status", "status"}, {"source", "source"}, {"channel", "source"},
	{"title", "title"}, {"url", "url"},
}

func importLegacy(in input, c ImportLegacy) (Result, bool) {
	legacy := in.legacy.doc
	sourceMap := value.NewMap()
	if c.SourceMap != nil {
		if v, err := pyjson.Decode(*c.SourceMap); err == nil {
			if m, isMap := v.(*value.Map); isMap {
				sourceMap = m
			}
		}
	}
	cursors, items := 0, 0
	if legacy != nil {
		if channels, isMap := getMap(legacy, "channels"); isMap {
			var failed *Result
			if cursors, failed = importChannels(in.doc, channels, sourceMap); failed != nil {
				return *failed, false
			}
		}
		items = importItems(in.doc, in.legacy.items, in.splitOff)
	}
	payload := value.NewMap()
	payload.Set("cursors_imported", value.Int(int64(cursors)))
	payload.Set("items_imported", value.Int(int64(items)))
	return ok(payload), in.fresh || cursors+items > 0
}

// legacyFile is import-legacy's file, parsed once for the load and the
// decision: its document (nil when absent, unreadable, or neither JSON nor
// the YAML subset gives a mapping) and the entries of its items that
// import.
type legacyFile struct {
	doc   *value.Map
	items []legacyItem
}

// parseLegacyFile parses the legacy file and lists its items.
func parseLegacyFile(l legacyInput) legacyFile {
	doc := parseLegacy(l)
	if doc == nil {
		return legacyFile{}
	}
	return legacyFile{doc, legacyItems(mapGet(doc, "items"))}
}

// parseLegacy reads the legacy file as JSON, else as the YAML subset; nil
// when neither gives a mapping.
func parseLegacy(l legacyInput) *value.Map {
	if !l.present {
		return nil
	}
	// The parts of the legacy document share blocks (values copied into
	// the state keep theirs alive, as they kept the text before).
	var arena value.Arena
	if v, err := pyjson.DecodeIn(l.text, &arena); err == nil {
		m, _ := v.(*value.Map)
		return m
	}
	if m, err := yamlsubset.ParseString(l.text); err == nil {
		return m
	}
	return nil
}

// importChannels sets the channels' cursors; a channel that reaches a
// sources or a source entry that is not a map fails the call (as in the
// reference), with nothing written.
func importChannels(doc, channels, sourceMap *value.Map) (int, *Result) {
	n := 0
	sources, sourcesOK := sourcesOf(doc)
	for _, ch := range channels.Keys() {
		entry, isMap := getMap(channels, ch)
		if !isMap {
			continue
		}
		// Python's `last_processed_ts or cursor`: only None skips, so "",
		// false and 0 are imported, and the value is stored as it is (a
		// number stays a number), as the reference does. The ordering
		// compares its str(), like a non-string stored cursor.
		cursor := mapGet(entry, "last_processed_ts")
		if !truthy(cursor) {
			cursor = mapGet(entry, "cursor")
		}
		if cursor == nil {
			continue
		}
		to := pyStr(cursor)
		name := ch
		if mapped, has := sourceMap.Get(ch); has {
			name = pyStr(mapped)
		}
		if !sourcesOK {
			return 0, &errBadSources
		}
		src, isMap := getMap(sources, name)
		if !isMap && sources.Has(name) {
			return 0, &errBadSourceEntry
		}
		if isMap {
			if cur := mapGet(src, "cursor"); cur != nil && cursorLess(to, pyStr(cur)) {
				continue
			}
		} else {
			src = value.NewMap()
			sources.Set(name, src)
		}
		src.Set("cursor", cursor)
		n++
	}
	return n, nil
}

// legacyItem is an entry of a legacy file's items that import-legacy
// imports: its id as the state's item key, and its fields.
type legacyItem struct {
	key    string
	fields *value.Map
}

// legacyItems lists the entries of a legacy file's items (a map by id, or
// a list of maps with an "id") that have an id Python finds true and
// fields, in the file's order.
func legacyItems(items value.Value) []legacyItem {
	var out []legacyItem
	switch t := items.(type) {
	case *value.Map:
		out = make([]legacyItem, 0, t.Len())
		// By position: a lookup by key would build the large map's index.
		for i := range t.Len() {
			k, v := t.At(i)
			if f, isMap := v.(*value.Map); isMap && k != "" {
				out = append(out, legacyItem{k, f})
			}
		}
	case []value.Value:
		for _, e := range t {
			if f, isMap := e.(*value.Map); isMap {
				if id := mapGet(f, "id"); truthy(id) {
					out = append(out, legacyItem{pyStr(id), f})
				}
			}
		}
	}
	return out
}

// importItems copies each legacy item's fields into the stored item
// that lacks them. An item in splitOff has every field it could be given
// (legacyTouches): it counts as imported and stays as it is.
func importItems(doc *value.Map, legacy []legacyItem, splitOff *yamlsubset.Split) int {
	items := mapAt(doc, "items")
	n := 0
	for _, e := range legacy {
		id := e.key
		if splitOff.Has(id) {
			n++
			continue
		}
		item, isMap := getMap(items, id)
		if !isMap {
			item = value.NewMap()
			items.Set(id, item)
		}
		for _, f := range legacyItemFields {
			v, has := e.fields.Get(f.from)
			if !has || v == nil || item.Has(f.to) {
				continue
			}
			item.Set(f.to, v)
		}
		n++
	}
	return n
}

func getMap(m *value.Map, k string) (*value.Map, bool) {
	v, _ := m.Get(k)
	sub, isMap := v.(*value.Map)
	return sub, isMap
}

func mapGet(m *value.Map, k string) value.Value {
	v, _ := m.Get(k)
	return v
}
