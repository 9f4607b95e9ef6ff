package sweepstate

import "time"

// Metrics answers counts for monitoring (spec/sweep-state.md §11.1): no
// lock, no write, and nothing of the file's text (no id, title, writer or
// path) in the answer. Its OK answer carries Result.Metrics and no
// payload.
type Metrics struct {
	// Now is the time the lease's and the last run's ages are measured
	// at; the zero time means the engine's clock.
	Now time.Time
}

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

// StateMetrics is what Metrics counts. Ages are whole microseconds, exact
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
