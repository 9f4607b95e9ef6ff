package sweepcli

import (
	"io"
	"strconv"
	"strings"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/storage/durable"
)

// metricsFamily starts one gauge family. Every family is a gauge: each
// value is a count or a state at one moment.
func metricsFamily(b *strings.Builder, name, help string) {
	b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
}

func metricsSample(b *strings.Builder, name, labels, v string) {
	b.WriteString(name)
	if labels != "" {
		b.WriteString("{" + labels + "}")
	}
	b.WriteString(" " + v + "\n")
}

func flag(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// secondsText writes whole microseconds as exact decimal seconds: no
// float rounding, no exponent, no trailing zeros ("3600", "-0.5",
// "1800.000001").
func secondsText(micros int64) string {
	sign := ""
	u := uint64(micros)
	if micros < 0 {
		sign, u = "-", uint64(-micros)
	}
	whole, frac := u/1_000_000, u%1_000_000
	if frac == 0 {
		return sign + strconv.FormatUint(whole, 10)
	}
	f := strings.TrimRight(strconv.FormatUint(frac+1_000_000, 10)[1:], "0")
	return sign + strconv.FormatUint(whole, 10) + "." + f
}

// metricsDown is the whole file --to leaves when the state could not be
// counted, so a scrape shows the failure instead of the last good counts.
const metricsDown = "# HELP sweep_state_up Whether the state file could be read and counted (1) or not (0).\n" +
	"# TYPE sweep_state_up gauge\n" +
	"sweep_state_up 0\n"

// metricsText renders the counts in Prometheus's text exposition format,
// in a fixed order, counts and fixed words only (spec/sweep-state.md
// §11.1).
func metricsText(m *sweepcore.StateMetrics) string {
	var b strings.Builder
	metricsFamily(&b, "sweep_state_up", "Whether the state file could be read and counted (1) or not (0).")
	metricsSample(&b, "sweep_state_up", "", "1")
	metricsFamily(&b, "sweep_state_items", "Items by status (other: any status not in the list, or none).")
	for _, s := range append(append([]string(nil), sweepcore.ItemStatuses...), sweepcore.StatusOther) {
		metricsSample(&b, "sweep_state_items", `status="`+s+`"`, strconv.Itoa(m.Items[s]))
	}
	metricsFamily(&b, "sweep_state_sources", "Source entries.")
	metricsSample(&b, "sweep_state_sources", "", strconv.Itoa(m.Sources))
	metricsFamily(&b, "sweep_state_lease_held", "Whether a writer holds the lease (1) or not (0).")
	metricsSample(&b, "sweep_state_lease_held", "", flag(m.LeaseHeld))
	metricsFamily(&b, "sweep_state_lease_stale", "Whether the held lease is past its TTL, so another writer may reclaim it (1) or not (0).")
	metricsSample(&b, "sweep_state_lease_stale", "", flag(m.LeaseStale))
	if m.LeaseAgeKnown {
		metricsFamily(&b, "sweep_state_lease_age_seconds", "Seconds since the held lease was last stamped.")
		metricsSample(&b, "sweep_state_lease_age_seconds", "", secondsText(m.LeaseAgeMicros))
	}
	metricsFamily(&b, "sweep_state_last_run_outcome", "The last recorded run's outcome (1 for it, 0 for the others; all 0 when none is recorded).")
	for _, o := range append(sweeprules.Outcomes(), sweepcore.StatusOther) {
		metricsSample(&b, "sweep_state_last_run_outcome", `outcome="`+o+`"`, flag(m.LastRunRecorded && m.LastRunOutcome == o))
	}
	if m.LastRunAgeKnown {
		metricsFamily(&b, "sweep_state_last_run_age_seconds", "Seconds since the last recorded run's timestamp.")
		metricsSample(&b, "sweep_state_last_run_age_seconds", "", secondsText(m.LastRunAgeMicros))
	}
	return b.String()
}

// writeMetricsFile replaces path with text, whole or not at all (a
// temporary file renamed into place, synced), mode 0644: counts only,
// for node_exporter's textfile collector, which runs as another user.
func writeMetricsFile(path, text string) error {
	return durable.WriteFileModeFunc(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
}
