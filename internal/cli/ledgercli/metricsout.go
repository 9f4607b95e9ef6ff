package ledgercli

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/storage/durable"
)

// exposition is an answer printed as it is (Prometheus's text format),
// not as a JSON line.
type exposition string

// The metrics command's own refusals: where --to points.
var (
	errMetricsDir   = explained(ledger.ErrInvalidInput, "metrics file directory does not exist")
	errMetricsWrite = explained(errInternal, "metrics file cannot be written")
)

// metricsFamily starts one metric family: its HELP and TYPE lines. Every
// family is a gauge: each value is a count or a state at one moment, and
// none only grows (prune removes tasks and events).
func metricsFamily(b *strings.Builder, name, help string) {
	b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
}

func metricsSample(b *strings.Builder, name, labels string, v int) {
	b.WriteString(name)
	if labels != "" {
		b.WriteString("{" + labels + "}")
	}
	b.WriteString(" " + strconv.Itoa(v) + "\n")
}

func boolValue(v bool) int {
	if v {
		return 1
	}
	return 0
}

// metricsDown is the whole file --to leaves when the ledger could not be
// read: a scrape then shows the failure instead of the last good counts.
const metricsDown = "# HELP task_state_guard_up Whether the ledger could be read (1) or the metrics run was refused (0).\n" +
	"# TYPE task_state_guard_up gauge\n" +
	"task_state_guard_up 0\n"

// The quick_check family's HELP text on each engine: SQLite runs its page
// check; a server has none, and its check is of the schema, its owner and
// grants, the triggers and the indexes (spec/task-state-guard.md §20.4
// item 2).
const (
	quickCheckHelpFile   = "Whether SQLite's quick_check passed (1) or failed (0)."
	quickCheckHelpServer = "Whether the server's check of the ledger's schema, owner, grants, triggers and indexes passed (1) or failed (0)."
)

// metricsText renders a report in Prometheus's text exposition format, in
// a fixed order, counts and fixed words only (spec/task-state-guard.md
// §6.13), with the graces as the command line read them; engine is the
// ledger's StorageInfo().Engine.
func metricsText(r ledger.MetricsReport, engine string, activeGrace, deliveryGrace float64) string {
	quickCheckHelp := quickCheckHelpFile
	if engine == ledger.EnginePostgreSQL {
		quickCheckHelp = quickCheckHelpServer
	}
	var b strings.Builder
	d := r.Doctor
	metricsFamily(&b, "task_state_guard_up", "Whether the ledger could be read (1) or the metrics run was refused (0).")
	metricsSample(&b, "task_state_guard_up", "", 1)
	metricsFamily(&b, "task_state_guard_healthy", "Whether the doctor finds the ledger healthy (1) or not (0).")
	metricsSample(&b, "task_state_guard_healthy", "", boolValue(d.Healthy))
	metricsFamily(&b, "task_state_guard_quick_check_ok", quickCheckHelp)
	metricsSample(&b, "task_state_guard_quick_check_ok", "", boolValue(d.QuickCheckOK))
	metricsFamily(&b, "task_state_guard_schema_ok", "Whether the schema is exactly the ledger's (1) or not (0).")
	metricsSample(&b, "task_state_guard_schema_ok", "", boolValue(d.SchemaOK))
	metricsFamily(&b, "task_state_guard_schema_version", "The ledger's schema version (0 when unreadable).")
	metricsSample(&b, "task_state_guard_schema_version", "", d.SchemaVersion)
	metricsFamily(&b, "task_state_guard_tasks", "Tasks by status.")
	for _, s := range taskStates {
		metricsSample(&b, "task_state_guard_tasks", `status="`+string(s)+`"`, d.TaskStatusCounts[s])
	}
	metricsFamily(&b, "task_state_guard_deliveries", "Tasks by delivery status.")
	for _, s := range deliveryStates {
		metricsSample(&b, "task_state_guard_deliveries", `status="`+string(s)+`"`, d.DeliveryStatusCounts[s])
	}
	metricsFamily(&b, "task_state_guard_events", "Events stored.")
	metricsSample(&b, "task_state_guard_events", "", d.EventCount)
	metricsFamily(&b, "task_state_guard_doctor_findings", "What the doctor counts as wrong, by kind.")
	for _, f := range []struct {
		kind  string
		count int
	}{
		{"orphan", d.OrphanCount},
		{"parent_cycle", d.ParentCycleCount},
		{"foreign_key_error", d.ForeignKeyErrorCount},
		{"state_inconsistency", d.StateInconsistencyCount},
		{"timestamp_inconsistency", d.TimestampInconsistencyCount},
		{"event_inconsistency", d.EventInconsistencyCount},
		{"doctor_error", d.DoctorErrorCount},
	} {
		metricsSample(&b, "task_state_guard_doctor_findings", `kind="`+f.kind+`"`, f.count)
	}
	metricsFamily(&b, "task_state_guard_stuck_work_known", "Whether reconcile's dry run could decide now (1); when 0 the stuck-work counts are left out.")
	metricsSample(&b, "task_state_guard_stuck_work_known", "", boolValue(r.StuckKnown))
	if r.StuckKnown {
		metricsFamily(&b, "task_state_guard_stuck_running_tasks", "Running tasks reconcile would time out now, by reason.")
		metricsSample(&b, "task_state_guard_stuck_running_tasks", `reason="past_deadline"`, r.RunningPastDeadline)
		metricsSample(&b, "task_state_guard_stuck_running_tasks", `reason="not_updated_within_grace"`, r.RunningNotUpdated)
		metricsFamily(&b, "task_state_guard_overdue_pending_deliveries", "Pending deliveries of ended tasks reconcile would settle now.")
		metricsSample(&b, "task_state_guard_overdue_pending_deliveries", "", r.DeliveriesOverdue)
	}
	metricsFamily(&b, "task_state_guard_active_grace_seconds", "The active grace the stuck running tasks were judged with.")
	b.WriteString("task_state_guard_active_grace_seconds " + pyFloat(activeGrace) + "\n")
	metricsFamily(&b, "task_state_guard_delivery_grace_seconds", "The delivery grace the overdue deliveries were judged with.")
	b.WriteString("task_state_guard_delivery_grace_seconds " + pyFloat(deliveryGrace) + "\n")
	return b.String()
}

// writeMetricsFile replaces path with text, whole or not at all: a
// temporary file in the same directory, synced, renamed over path, the
// directory synced (node_exporter's textfile collector must never read a
// torn file). The file is 0644: it holds counts only, and the collector
// runs as another user.
func writeMetricsFile(path, text string) error {
	info, err := os.Stat(filepath.Dir(path))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !info.IsDir()) {
		return errMetricsDir
	}
	err = durable.WriteFileModeFunc(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
	if err != nil {
		return errMetricsWrite
	}
	return nil
}
