package main

import (
	"fmt"
	"math/big"
	"math/rand"
	"strconv"
	"time"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	model "github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// generateSweep returns one sequence of sweep-state calls drawn from the
// executable model (model/sweep): the model applies every call as it is
// drawn, and the next call is chosen from the file the model says is
// there: mostly the lease holder writes; a lease is taken or contested at
// the exact microsecond its TTL ends and one either side; items the file
// holds are upserted again, closed with every subset of the evidence
// (falsy values included) so that validate has something to downgrade;
// a cursor moves to its own value, past it, back before it (refused), in
// numeric and in lexical order, past items the file has and has not. The
// clock moves forward only. Besides, as the contract defines them: misuse
// and the inputs of the declared divergences D5, D7 and D14.
func generateSweep(r *rand.Rand, steps int) []step {
	seq, _ := drawSweep(r, steps)
	return seq
}

// drawSweep is generateSweep, with a count of the model's answers the
// sequence met, by status word, and of validates that downgraded (for the
// tests: each must be met).
func drawSweep(r *rand.Rand, steps int) ([]step, map[string]int) {
	g := sweepGen{r: r, clock: sweepBase, met: map[string]int{}}
	if r.Intn(8) == 0 {
		// A call on a file that does not exist yet.
		g.apply(model.Read{}, "read")
	}
	w := sweepWriters[0]
	g.apply(model.LeaseAcquire{Writer: w, Now: g.now()}, "lease-acquire", "--writer", w, "--now", g.now())
	for len(g.seq) < steps {
		g.clock = g.clock.Add(time.Duration(r.Intn(25)) * time.Minute)
		switch k := r.Intn(100); {
		case k < 16:
			g.leaseAcquire()
		case k < 21:
			w := g.writer()
			g.apply(model.LeaseRelease{Writer: w}, "lease-release", "--writer", w)
		case k < 45:
			g.upsertItem()
		case k < 57:
			g.cursorAdvance()
		case k < 61:
			src := g.pick(sweepSources)
			g.apply(model.CursorGet{Source: src}, "cursor-get", "--source", src)
		case k < 66:
			g.runRecord()
		case k < 80:
			g.apply(model.Validate{}, "validate")
		case k < 95:
			g.apply(model.Read{}, "read")
		default:
			g.misuse()
		}
	}
	return g.seq, g.met
}

var (
	sweepBase    = time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)
	sweepWriters = []string{"w1", "w2"}
	sweepSources = []string{"mail", "chat"}
	sweepIDs     = []string{"a1", "a2", "9", "10"}
	// falsy are evidence values the reference's truth test rejects.
	falsy = []value.Value{"", value.Int(0), false, nil}
)

// sweepGen is a sequence being drawn and the model's file after it.
type sweepGen struct {
	r     *rand.Rand
	clock time.Time
	state model.State
	seq   []step
	met   map[string]int
	// lastWord is the model's answer to the last call it took.
	lastWord string
}

func (g *sweepGen) pick(words []string) string { return words[g.r.Intn(len(words))] }

func (g *sweepGen) now() string { return g.clock.Format(time.RFC3339) }

// apply appends the call and lets the model answer it.
func (g *sweepGen) apply(cmd model.Command, sub string, flags ...string) {
	g.add(sub, flags...)
	var res model.Result
	res, g.state = model.Apply(g.state, cmd)
	g.met[res.Word]++
	g.lastWord = res.Word
	if m, ok := res.Payload.(*value.Map); ok && sub == "validate" {
		if v, _ := get(m, "downgraded"); len(asList(v)) > 0 {
			g.met["downgraded"]++
		}
	}
}

// add appends a call the model does not take (misuse, which never reaches
// the engine).
func (g *sweepGen) add(sub string, flags ...string) {
	g.lastWord = ""
	g.seq = append(g.seq, step{args: append([]string{sub, "--state", "state.yml"}, flags...)})
}

// doc is the model's file, or nil when it holds no document.
func (g *sweepGen) doc() *value.Map {
	if g.state.Kind != model.Parsed {
		return nil
	}
	return g.state.Doc
}

func mapAt(m *value.Map, key string) *value.Map {
	v, _ := get(m, key)
	sub, _ := v.(*value.Map)
	return sub
}

// get is m's value at key; a nil map holds nothing.
func get(m *value.Map, key string) (value.Value, bool) {
	if m == nil {
		return nil, false
	}
	return m.Get(key)
}

// lease is the model's lease: its writer, stamp and TTL in minutes.
func (g *sweepGen) lease() (writer string, stamp model.Instant, ttl int64, ok bool) {
	l := mapAt(g.doc(), "lease")
	w, _ := get(l, "writer")
	writer, _ = w.(string)
	ts, _ := get(l, "timestamp")
	text, _ := ts.(string)
	stamp, parsed := model.ParseTime(text)
	ttl = 60
	if v, found := get(l, "ttl_minutes"); found {
		if n, isInt := model.PyInt(v); isInt && n.IsInt64() && n.Int64() >= 0 && n.Int64() < 100000 {
			ttl = n.Int64()
		}
	}
	return writer, stamp, ttl, writer != "" && parsed
}

// writer is the lease holder four times in five, so that writes get
// through; the other writer brings the lease's contests.
func (g *sweepGen) writer() string {
	if w, _, _, ok := g.lease(); ok && g.r.Intn(5) > 0 {
		return w
	}
	return g.pick(sweepWriters)
}

// leaseAcquire takes, restamps or contests the lease, half the time at
// the end of the current lease's TTL (exactly, or a microsecond either
// side), where the model decides between LOCKED and STALE-RECLAIMED.
func (g *sweepGen) leaseAcquire() {
	w := g.pick(sweepWriters)
	now := g.now()
	if _, stamp, ttl, ok := g.lease(); ok && g.r.Intn(2) == 0 {
		// Instants count microseconds from the start of year 1.
		const year1ToUnix = 62135596800 * 1_000_000
		end := time.UnixMicro(int64(stamp) - year1ToUnix + ttl*60_000_000 + []int64{-1, 0, 1}[g.r.Intn(3)]).UTC()
		if end.After(g.clock) {
			g.clock = end
		}
		now = g.clock.Format("2006-01-02T15:04:05.000000Z07:00")
		defer func() {
			// The model's answer a microsecond either side of the end.
			if w := g.seq[len(g.seq)-1]; flagValue(w.args, "--now") == now && g.lastWord != "" {
				g.met["at the TTL's end: "+g.lastWord]++
			}
		}()
	}
	cmd := model.LeaseAcquire{Writer: w, Now: now}
	flags := []string{"--writer", w}
	if g.r.Intn(20) == 0 {
		// A negative TTL (D7): misuse here, a lease at once stale there.
		g.add("lease-acquire", "--writer", w, "--ttl-minutes", "-1", "--now", now)
		return
	}
	if g.r.Intn(2) == 0 {
		ttl := []int64{0, 1, 5, 60}[g.r.Intn(4)]
		cmd.TTLMinutes = big.NewInt(ttl)
		flags = append(flags, "--ttl-minutes", strconv.FormatInt(ttl, 10))
	}
	g.apply(cmd, "lease-acquire", append(flags, "--now", now)...)
}

// itemKey is a source and id of an item the file holds, mostly, or a new
// pair.
func (g *sweepGen) itemKey() (string, string) {
	if items := mapAt(g.doc(), "items"); items != nil && items.Len() > 0 && g.r.Intn(2) == 0 {
		item := mapAt(items, items.Keys()[g.r.Intn(items.Len())])
		src, _ := get(item, "source")
		id, _ := get(item, "id")
		s, okS := src.(string)
		i, okI := id.(string)
		if okS && okI {
			return s, i
		}
	}
	return g.pick(sweepSources), g.pick(sweepIDs)
}

// upsertItem merges an item: closed or not, with each subset of the
// closing evidence, falsy evidence values among them.
func (g *sweepGen) upsertItem() {
	w, now := g.writer(), g.now()
	src, id := g.itemKey()
	if g.r.Intn(25) == 0 {
		// A number JSON cannot hold (D5): ERROR here, written there.
		g.apply(model.UpsertItem{Source: src, ID: id, Writer: w, Now: now}, "upsert-item",
			"--source", src, "--id", id, "--json", g.pick([]string{`{"n": NaN}`, `{"n": -Infinity}`, `{"n": 1e999}`}), "--writer", w, "--now", now)
		return
	}
	item := value.NewMap()
	item.Set("title", fmt.Sprintf("t%d", g.r.Intn(5)))
	item.Set("status", g.pick([]string{"open", "closed", "closed", "fix_pending"}))
	item.Set("n", value.Int(int64(g.r.Intn(1000))))
	for _, field := range []string{"fix_ref", "verified_revision_id", "verified_at"} {
		switch g.r.Intn(4) {
		case 0: // absent
		case 1:
			item.Set(field, falsy[g.r.Intn(len(falsy))])
		default:
			item.Set(field, map[string]string{"fix_ref": "PR#7", "verified_revision_id": "abc123", "verified_at": now}[field])
		}
	}
	g.apply(model.UpsertItem{Source: src, ID: id, Writer: w, Now: now, Item: model.Decoded{Value: item, OK: true}}, "upsert-item",
		"--source", src, "--id", id, "--json", string(pyjson.Encode(item)), "--writer", w, "--now", now)
}

// cursorAdvance moves a source's cursor relative to where the model has
// it: to the same value, on, back (refused), or to a number of another
// length (numeric and lexical order differ), past an item the file holds
// or one it does not.
func (g *sweepGen) cursorAdvance() {
	w, now := g.writer(), g.now()
	src, id := g.itemKey()
	if g.r.Intn(4) == 0 {
		id = g.pick(sweepIDs)
	}
	current := 0
	if c, ok := get(mapAt(mapAt(g.doc(), "sources"), src), "cursor"); ok && c != nil {
		current, _ = strconv.Atoi(model.PyStr(c))
	}
	to := strconv.Itoa(max(0, current+[]int{0, 1, 7, 90, -1, -5}[g.r.Intn(6)]))
	if g.r.Intn(20) == 0 {
		// A --now that is not a time (D14): misuse here.
		g.add("cursor-advance", "--source", src, "--to", to, "--past-item", id, "--writer", w, "--now", "soon")
		return
	}
	g.apply(model.CursorAdvance{Source: src, To: to, PastItem: id, Writer: w, Now: now}, "cursor-advance",
		"--source", src, "--to", to, "--past-item", id, "--writer", w, "--now", now)
}

func (g *sweepGen) runRecord() {
	w, outcome := g.writer(), g.pick([]string{"completed", "failed"})
	counts := value.NewMap()
	counts.Set("seen", value.Int(int64(g.r.Intn(5))))
	g.apply(model.RunRecord{Writer: w, Outcome: outcome, Timestamp: g.now(), Counts: model.Decoded{Value: counts, OK: true}}, "run-record",
		"--writer", w, "--outcome", outcome, "--counts", string(pyjson.Encode(counts)), "--timestamp", g.now())
}

// misuse is a call both answer alike (exit 2, nothing written).
func (g *sweepGen) misuse() {
	switch g.r.Intn(3) {
	case 0:
		g.add("upsert-item", "--source", g.pick(sweepSources), "--writer", g.writer())
	case 1:
		g.add("run-record", "--writer", g.writer(), "--outcome", "maybe", "--timestamp", g.now())
	default:
		g.add("cursor-advance", "--source", g.pick(sweepSources), "--to", "3")
	}
}

func asList(v value.Value) []value.Value {
	list, _ := v.([]value.Value)
	return list
}
