package ledgercli

import (
	"bytes"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// generatedLedger fills a ledger with random work (trees of tasks, starts,
// heartbeats, closes, deliveries, reconciles) on a clock of whole seconds
// and returns its path and the clock's last time.
func generatedLedger(t *testing.T, seed int64) (string, float64) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	now := 978307200.0
	p := filepath.Join(t.TempDir(), "tasks.sqlite")
	l, err := ledger.Open(p, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: platformtest.Windows}, func() float64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var ids []string
	for i := 0; i < 120; i++ {
		now += float64(rng.Intn(5))
		switch op := rng.Intn(7); {
		case op <= 1 || len(ids) == 0:
			c := ledger.CreateParams{Internal: rng.Intn(3) == 0}
			if rng.Intn(2) == 0 {
				c.Timeout = new(time.Duration(rng.Intn(20)+40*rng.Intn(2)) * time.Second)
			}
			if len(ids) > 0 && rng.Intn(3) == 0 {
				c.ParentID = ids[rng.Intn(len(ids))]
			}
			if task, err := l.Create(c); err == nil {
				ids = append(ids, task.ID)
			}
		case op == 2:
			l.Start(ids[rng.Intn(len(ids))])
		case op == 3:
			l.Heartbeat(ids[rng.Intn(len(ids))])
		case op == 4:
			l.CloseTask(ids[rng.Intn(len(ids))], []ledger.Status{ledger.StatusSucceeded, ledger.StatusFailed, ledger.StatusCancelled}[rng.Intn(3)], "")
		case op == 5:
			l.SetDelivery(ids[rng.Intn(len(ids))], []ledger.DeliveryStatus{ledger.DeliveryDelivered, ledger.DeliveryNotApplicable}[rng.Intn(2)], "")
		default:
			if rng.Intn(5) == 0 {
				l.Reconcile(ledger.ReconcileOptions{ActiveGrace: new(time.Duration(0)), DeliveryGrace: new(30 * time.Second)})
			}
		}
	}
	return p, now
}

// parseMetrics parses the exposition text with the Prometheus project's
// own parser, under the classic name rules, and checks the conventions
// every family must keep: HELP text, gauge type, no _total suffix (no
// counter), the project's prefix.
func parseMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the Prometheus parser refuses the text: %v\n%s", err, text)
	}
	for name, f := range families {
		if f.GetHelp() == "" || f.GetType() != dto.MetricType_GAUGE || strings.HasSuffix(name, "_total") || !strings.HasPrefix(name, "task_state_guard_") {
			t.Errorf("family %s: help %q, type %v", name, f.GetHelp(), f.GetType())
		}
	}
	return families
}

// value is the sample of family name whose labels are labels (name=value
// pairs); it fails the test when there is none.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f, ok := families[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName()+"="+lp.GetValue())
		}
		if strings.Join(got, ",") == strings.Join(labels, ",") {
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no sample %s%v", name, labels)
	return 0
}

// runMetrics runs the command line's metrics at the test clock now.
func runMetrics(t *testing.T, db string, now float64, extra ...string) string {
	t.Helper()
	getenv := func(k string) string {
		switch k {
		case TestClockEnv:
			return "1"
		case TestNowEnv:
			return strconv.FormatFloat(now, 'f', -1, 64)
		}
		return ""
	}
	var out bytes.Buffer
	args := append(platformtest.ACLArgs("--db", db, "metrics"), extra...)
	if status := run(args, &out, getenv); status != exitOK {
		t.Fatalf("metrics: exit %d: %s", status, out.String())
	}
	return out.String()
}

// Over generated ledgers, at later times and with several graces, the
// Prometheus project's parser reads every sample of metrics, and each value
// is what doctor and reconcile --dry-run (through the API, read-only, at
// the same clock) report; nothing of a caller's (an id) is in the text.
func TestMetricsTextMatchesDoctorAndReconcile(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			db, now := generatedLedger(t, seed)
			for _, g := range []struct{ at, active, delivery float64 }{
				{0, 600, 600}, {30, 20, 10}, {90, 0, 0}, {400, 45.5, 1000},
			} {
				at := now + g.at
				var extra []string
				if g.active != 600 || g.delivery != 600 {
					extra = []string{"--active-grace-seconds", fmt.Sprint(g.active), "--delivery-grace-seconds", fmt.Sprint(g.delivery)}
				}
				text := runMetrics(t, db, at, extra...)
				if strings.Contains(text, "-4000-8000-") || strings.Contains(text, db) {
					t.Fatal("the text holds an id or the path")
				}
				families := parseMetrics(t, text)

				l, err := ledger.Open(db, ledgerrows.WithClockSeconds(ledger.Options{ReadOnly: true, AllowExternalACL: platformtest.Windows}, func() float64 { return at }))
				if err != nil {
					t.Fatal(err)
				}
				doc, err := l.Doctor()
				if err != nil {
					t.Fatal(err)
				}
				dry, err := ledgerrows.ReconcileSeconds(t.Context(), l, g.active, g.delivery, true)
				if err != nil {
					t.Fatal(err)
				}
				l.Close()

				want := map[string]float64{
					"task_state_guard_up":                         1,
					"task_state_guard_healthy":                    float64(boolValue(doc.Healthy)),
					"task_state_guard_quick_check_ok":             float64(boolValue(doc.QuickCheckOK)),
					"task_state_guard_schema_ok":                  float64(boolValue(doc.SchemaOK)),
					"task_state_guard_schema_version":             float64(doc.SchemaVersion),
					"task_state_guard_events":                     float64(doc.EventCount),
					"task_state_guard_stuck_work_known":           1,
					"task_state_guard_active_grace_seconds":       g.active,
					"task_state_guard_delivery_grace_seconds":     g.delivery,
					"task_state_guard_overdue_pending_deliveries": float64(dry.DeliveriesFailed + dry.DeliveriesNotApplicable),
				}
				for name, v := range want {
					if got := value(t, families, name); got != v {
						t.Errorf("%s = %v, want %v", name, got, v)
					}
				}
				samples := len(want)
				for s, n := range doc.TaskStatusCounts {
					samples++
					if got := value(t, families, "task_state_guard_tasks", "status="+string(s)); got != float64(n) {
						t.Errorf("tasks %s = %v, want %d", s, got, n)
					}
				}
				for s, n := range doc.DeliveryStatusCounts {
					samples++
					if got := value(t, families, "task_state_guard_deliveries", "status="+string(s)); got != float64(n) {
						t.Errorf("deliveries %s = %v, want %d", s, got, n)
					}
				}
				for kind, n := range map[string]int{
					"orphan": doc.OrphanCount, "parent_cycle": doc.ParentCycleCount, "foreign_key_error": doc.ForeignKeyErrorCount,
					"state_inconsistency": doc.StateInconsistencyCount, "timestamp_inconsistency": doc.TimestampInconsistencyCount,
					"event_inconsistency": doc.EventInconsistencyCount, "doctor_error": doc.DoctorErrorCount,
				} {
					samples++
					if got := value(t, families, "task_state_guard_doctor_findings", "kind="+kind); got != float64(n) {
						t.Errorf("finding %s = %v, want %d", kind, got, n)
					}
				}
				stuck := value(t, families, "task_state_guard_stuck_running_tasks", "reason=past_deadline") +
					value(t, families, "task_state_guard_stuck_running_tasks", "reason=not_updated_within_grace")
				samples += 2
				if stuck != float64(dry.TasksTimedOut) {
					t.Errorf("stuck running %v, reconcile --dry-run times out %d", stuck, dry.TasksTimedOut)
				}
				total := 0
				for _, f := range families {
					total += len(f.GetMetric())
				}
				if total != samples {
					t.Errorf("%d samples, %d compared", total, samples)
				}
			}
		})
	}
}
