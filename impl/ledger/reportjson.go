package ledger

import "encoding/json"

// The reports marshal to JSON exactly as task-state-guard prints them:
// keys sorted, no spaces, the CLI's snake_case names. encoding/json writes
// a map's keys sorted, which is the CLI's order.

// MarshalJSON writes the report as the "reconcile" object of
// task-state-guard reconcile.
func (r ReconcileReport) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{
		"active_examined":           r.ActiveExamined,
		"tasks_timed_out":           r.TasksTimedOut,
		"fresh_active_retained":     r.FreshActiveRetained,
		"pending_delivery_examined": r.PendingDeliveryExamined,
		"deliveries_failed":         r.DeliveriesFailed,
		"deliveries_not_applicable": r.DeliveriesNotApplicable,
		"pending_delivery_retained": r.PendingDeliveryRetained,
		"dry_run":                   r.DryRun,
		"applied":                   r.Applied,
	})
}

// MarshalJSON writes the report as the "prune" object of task-state-guard
// prune.
func (r PruneReport) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{
		"trees_examined": r.TreesExamined,
		"trees_removed":  r.TreesRemoved,
		"trees_retained": r.TreesRetained,
		"tasks_removed":  r.TasksRemoved,
		"events_removed": r.EventsRemoved,
		"dry_run":        r.DryRun,
		"applied":        r.Applied,
	})
}

// MarshalJSON writes the report as task-state-guard doctor prints it,
// with every task and delivery state in the two count maps, zeros
// included, whatever the maps hold.
func (r DoctorReport) MarshalJSON() ([]byte, error) {
	tasks := make(map[string]int, len(taskStatuses))
	for _, s := range taskStatuses {
		tasks[string(s)] = r.TaskStatusCounts[s]
	}
	deliveries := make(map[string]int, len(deliveryStatuses))
	for _, s := range deliveryStatuses {
		deliveries[string(s)] = r.DeliveryStatusCounts[s]
	}
	return json.Marshal(map[string]any{
		"healthy":                       r.Healthy,
		"quick_check":                   quickCheckWord(r.QuickCheckOK),
		"schema_version":                r.SchemaVersion,
		"schema_ok":                     r.SchemaOK,
		"task_count":                    r.TaskCount,
		"event_count":                   r.EventCount,
		"task_status_counts":            tasks,
		"delivery_status_counts":        deliveries,
		"orphan_count":                  r.OrphanCount,
		"parent_cycle_count":            r.ParentCycleCount,
		"foreign_key_error_count":       r.ForeignKeyErrorCount,
		"state_inconsistency_count":     r.StateInconsistencyCount,
		"timestamp_inconsistency_count": r.TimestampInconsistencyCount,
		"event_inconsistency_count":     r.EventInconsistencyCount,
		"doctor_error_count":            r.DoctorErrorCount,
	})
}

// quickCheckWord is the doctor's "quick_check" value.
func quickCheckWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "failed"
}

// MarshalJSON writes the page as task-state-guard list prints it, less its
// "ok": the tasks, and next as null on the last page.
func (p ListPage) MarshalJSON() ([]byte, error) {
	tasks := p.Tasks
	if tasks == nil {
		tasks = []Task{}
	}
	var next any
	if p.Next != "" {
		next = p.Next
	}
	return json.Marshal(map[string]any{"tasks": tasks, "next": next})
}

// MarshalJSON writes the settings as the "storage" object of
// task-state-guard init. A ledger on a server has no file settings: it
// names its engine and the settings every transaction runs with instead
// (spec, the PostgreSQL engine).
func (s StorageInfo) MarshalJSON() ([]byte, error) {
	if s.Engine == EnginePostgreSQL {
		return json.Marshal(map[string]any{
			"busy_timeout_ms":  s.BusyTimeoutMS,
			"engine":           s.Engine,
			"foreign_keys":     s.ForeignKeys,
			"isolation":        "read_committed",
			"permission_model": s.PermissionModel,
			"schema_version":   2,
		})
	}
	return json.Marshal(map[string]any{
		"busy_timeout_ms":  s.BusyTimeoutMS,
		"foreign_keys":     s.ForeignKeys,
		"journal_mode":     s.JournalMode,
		"permission_model": s.PermissionModel,
	})
}

// Every state, for the doctor's count maps.
var (
	taskStatuses = [...]Status{
		StatusQueued, StatusRunning, StatusSucceeded,
		StatusFailed, StatusTimedOut, StatusCancelled,
	}
	deliveryStatuses = [...]DeliveryStatus{
		DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryNotApplicable,
	}
)
