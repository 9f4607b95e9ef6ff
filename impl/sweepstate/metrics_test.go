package sweepstate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
)

// metricsFile writes text as a state file and returns its path.
func metricsFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sweep.yml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func zeroItems() map[string]int {
	m := map[string]int{sweepstate.StatusOther: 0}
	for _, s := range sweepstate.ItemStatuses {
		m[s] = 0
	}
	return m
}

// Metrics counts items by status (unknown statuses, non-string ones and
// non-map items as other), the sources, the lease (held, stale at now by
// the reclaim rule, its age) and the last run (outcome word, age), and
// reads and writes nothing else.
func TestMetricsCounts(t *testing.T) {
	const state = `schema_version: 1
lease:
  writer: "secret-writer"
  timestamp: "2026-07-02T10:59:59.5Z"
  ttl_minutes: 60
sources:
  gh:
    cursor: "9"
  chat: {}
items:
  "gh:1":
    status: closed
  "gh:2":
    status: ingested
  "gh:3":
    status: "made-up"
  "gh:4":
    status: 7
  "gh:5": "not a map"
  "gh:6":
    title: "no status"
  "chat:1":
    status: ingested
last_run:
  timestamp: "2026-07-02T11:30:00+00:00"
  outcome: partial
  writer: "secret-writer"
  counts: {}
`
	p := metricsFile(t, state)
	eng := sweepstate.Engine{Clock: func() time.Time { t.Fatal("clock read despite Now"); return time.Time{} }}
	res := eng.Run(p, sweepstate.Metrics{Now: now})
	items := zeroItems()
	items["closed"], items["ingested"], items[sweepstate.StatusOther] = 1, 2, 4
	want := &sweepstate.StateMetrics{
		Items: items, Sources: 2,
		LeaseHeld: true, LeaseStale: true, LeaseAgeKnown: true, LeaseAgeMicros: 3600_500_000,
		LastRunRecorded: true, LastRunOutcome: "partial", LastRunAgeKnown: true, LastRunAgeMicros: 1800_000_000,
	}
	if res.Word != sweepstate.WordOK || !res.Payload.IsZero() || !reflect.DeepEqual(res.Metrics, want) {
		t.Fatalf("%s %+v, want %+v", res.Word, res.Metrics, want)
	}
	// Exactly at the TTL the lease is live; the clock serves when Now is
	// empty.
	eng.Clock = func() time.Time { return time.Date(2026, 7, 2, 11, 59, 59, 500_000_000, time.UTC) }
	res = eng.Run(p, sweepstate.Metrics{})
	if res.Metrics == nil || res.Metrics.LeaseStale || res.Metrics.LeaseAgeMicros != 3600_000_000 || res.Metrics.LastRunAgeMicros != 1799_500_000 {
		t.Fatalf("at the TTL: %+v", res.Metrics)
	}
	// A now that does not parse: held, not stale (7.5), no ages.
	core := sweepcore.Run(context.Background(), eng.Clock, p, sweepcore.Metrics{Now: "garbage"})
	if m := core.Metrics; m == nil || !m.LeaseHeld || m.LeaseStale || m.LeaseAgeKnown || m.LastRunAgeKnown || !m.LastRunRecorded {
		t.Fatalf("unparseable now: %+v", m)
	}
	if got, _ := os.ReadFile(p); string(got) != state {
		t.Fatal("metrics changed the file")
	}
	if _, err := os.Stat(p + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("metrics made a lock file")
	}
}

// No lease, an empty writer, no last run, an outcome outside the list and
// a timestamp that does not parse.
func TestMetricsWithoutLeaseOrRun(t *testing.T) {
	for _, c := range []struct {
		state string
		want  sweepstate.StateMetrics
	}{
		{"schema_version: 1\n", sweepstate.StateMetrics{}},
		{"schema_version: 1\nlease:\n  writer: \"\"\n  timestamp: \"2020-01-01\"\n", sweepstate.StateMetrics{}},
		{"schema_version: 1\nlease:\n  writer: w\n  timestamp: 5\nlast_run:\n  outcome: \"bogus\"\n  timestamp: \"yesterday\"\n",
			sweepstate.StateMetrics{LeaseHeld: true, LastRunRecorded: true, LastRunOutcome: sweepstate.StatusOther}},
	} {
		res := (&sweepstate.Engine{}).Run(metricsFile(t, c.state), sweepstate.Metrics{Now: now})
		c.want.Items = zeroItems()
		if res.Word != sweepstate.WordOK || !reflect.DeepEqual(*res.Metrics, c.want) {
			t.Errorf("%q: %s %+v", c.state, res.Word, res.Metrics)
		}
	}
}

// Files read refuses are answered as read answers them, without metrics;
// sources that is not a map is ERROR, as for the commands that use it; a
// Now that is not UTF-8 is refused before the file is touched.
func TestMetricsAnswersAsRead(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"absent":       filepath.Join(dir, "absent.yml"),
		"whitespace":   metricsFile(t, " \n"),
		"corrupt":      metricsFile(t, "schema_version: 1\nitems: yes\n"),
		"no version":   metricsFile(t, "items: {}\n"),
		"items a list": metricsFile(t, "schema_version: 1\nitems: []\n"),
		"directory":    dir,
	}
	for name, p := range cases {
		read := (&sweepstate.Engine{}).Run(p, sweepstate.Read{})
		res := (&sweepstate.Engine{}).Run(p, sweepstate.Metrics{Now: now})
		if res.Word != read.Word || res.Reason != read.Reason || res.Metrics != nil || read.Word == sweepstate.WordOK {
			t.Errorf("%s: metrics %s %q, read %s %q", name, res.Word, res.Reason, read.Word, read.Reason)
		}
	}
	res := (&sweepstate.Engine{}).Run(metricsFile(t, "schema_version: 1\nsources: 5\n"), sweepstate.Metrics{Now: now})
	if res.Word != sweepstate.WordError || res.Reason != "the state file's sources is not a mapping" || res.Metrics != nil {
		t.Errorf("sources not a map: %s %q", res.Word, res.Reason)
	}
	core := sweepcore.Run(context.Background(), nil, filepath.Join(dir, "absent.yml"), sweepcore.Metrics{Now: "bad\xff"})
	if core.Word != sweepcore.WordError || core.Fault != sweepcore.InvalidCommand {
		t.Errorf("Now not UTF-8: %s %v", core.Word, core.Err)
	}
}
