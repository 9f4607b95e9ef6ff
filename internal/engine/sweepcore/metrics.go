package sweepcore

import (
	"slices"

	"github.com/stateguard/stateguard/internal/codec/isotime"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/model/value"
)

// ItemStatuses are the item statuses Metrics counts by name, in the
// order of spec/sweep-state.md §3; any other status (or none) counts as
// StatusOther.
var ItemStatuses = []string{
	"ingested", "ack_deferred", "acknowledged", "needs_download", "needs_analysis",
	"manual_stuck", "analyzed", "in_plan", "fix_pending", "closed", "source_gone",
}

// StatusOther is the bucket of items whose status is not one of
// ItemStatuses, and of a last run whose outcome is not one of the
// outcomes run-record accepts.
const StatusOther = "other"

// StateMetrics is what Metrics counts (the Go API's StateMetrics is the
// same struct, converted as it is). Ages are whole microseconds, exact
// (the times are read as the lease's staleness check reads them, to the
// microsecond), and may be negative when the time stamped lies after now.
type StateMetrics struct {
	// Items counts the items by status: every name of ItemStatuses and
	// StatusOther is a key, zeros included.
	Items map[string]int
	// Sources is the number of source entries.
	Sources int
	// LeaseHeld: a lease map with a truthy writer (§7.2).
	LeaseHeld bool
	// LeaseStale: held and provably stale at now (§7.5), so another
	// writer's lease-acquire would reclaim it.
	LeaseStale bool
	// LeaseAgeKnown: held, and both its timestamp and now parse.
	LeaseAgeKnown  bool
	LeaseAgeMicros int64
	// LastRunRecorded: last_run is a map. LastRunOutcome is then its
	// outcome when that is one run-record accepts, else StatusOther.
	LastRunRecorded bool
	LastRunOutcome  string
	// LastRunAgeKnown: recorded, and both its timestamp and now parse.
	LastRunAgeKnown  bool
	LastRunAgeMicros int64
}

// countMetrics decides Metrics over the loaded document.
func countMetrics(in input) Result {
	if in.fresh {
		return Result{Word: WordNoState}
	}
	sources, isMap := sourcesOf(in.doc)
	if !isMap {
		return errBadSources
	}
	m := &StateMetrics{Items: map[string]int{StatusOther: 0}, Sources: sources.Len()}
	for _, s := range ItemStatuses {
		m.Items[s] = 0
	}
	if items, isMap := getMap(in.doc, "items"); isMap {
		for i := 0; i < items.Len(); i++ {
			_, v := items.At(i)
			status := StatusOther
			if item, isMap := v.(*value.Map); isMap {
				if s, isString := mapGet(item, "status").(string); isString && slices.Contains(ItemStatuses, s) {
					status = s
				}
			}
			m.Items[status]++
		}
	}
	now, nowParses := isotime.Parse(in.now)
	age := func(stamp value.Value) (int64, bool) {
		text, isString := stamp.(string)
		if !isString || !nowParses {
			return 0, false
		}
		at, parses := isotime.Parse(text)
		if !parses {
			return 0, false
		}
		return int64(now - at), true
	}
	if lease, isMap := getMap(in.doc, "lease"); isMap && truthy(mapGet(lease, "writer")) {
		m.LeaseHeld = true
		m.LeaseStale = provablyStale(lease, in.now)
		m.LeaseAgeMicros, m.LeaseAgeKnown = age(mapGet(lease, "timestamp"))
	}
	if last, isMap := getMap(in.doc, "last_run"); isMap {
		m.LastRunRecorded = true
		m.LastRunOutcome = StatusOther
		if o, isString := mapGet(last, "outcome").(string); isString && sweeprules.CheckOutcome(o) == nil {
			m.LastRunOutcome = o
		}
		m.LastRunAgeMicros, m.LastRunAgeKnown = age(mapGet(last, "timestamp"))
	}
	return Result{Word: WordOK, Metrics: m}
}
