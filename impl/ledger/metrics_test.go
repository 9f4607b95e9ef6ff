package ledger

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// randomLedger runs random operations (creates in trees, starts, heartbeats,
// closes, deliveries, reconciles) on a fresh ledger, with a clock that moves
// forward by 0 to 4 seconds between them.
func randomLedger(t *testing.T, seed int64, ops int) (*Ledger, *scriptedClock, []string) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	l, clk, _ := openTest(t)
	var ids []string
	for i := 0; i < ops; i++ {
		clk.now += float64(rng.Intn(5))
		switch op := rng.Intn(7); {
		case op <= 1 || len(ids) == 0:
			p := CreateParams{Internal: rng.Intn(3) == 0}
			if rng.Intn(2) == 0 {
				p.Timeout = new(time.Duration(rng.Intn(8)+20*rng.Intn(2)) * time.Second)
			}
			if len(ids) > 0 && rng.Intn(3) == 0 {
				p.ParentID = ids[rng.Intn(len(ids))]
			}
			if task, err := l.Create(p); err == nil {
				ids = append(ids, task.ID)
			}
		case op == 2:
			l.Start(ids[rng.Intn(len(ids))])
		case op == 3:
			l.Heartbeat(ids[rng.Intn(len(ids))])
		case op == 4:
			l.CloseTask(ids[rng.Intn(len(ids))], []Status{StatusSucceeded, StatusFailed, StatusCancelled}[rng.Intn(3)], "")
		case op == 5:
			l.SetDelivery(ids[rng.Intn(len(ids))], []DeliveryStatus{DeliveryDelivered, DeliveryNotApplicable}[rng.Intn(2)], "")
		default:
			if rng.Intn(4) == 0 {
				l.reconcileFloat(float64(rng.Intn(6)), float64(rng.Intn(6)), false)
			}
		}
	}
	return l, clk, ids
}

// The stuck-work counts are what a dry-run reconcile at the same clock
// settles: over generated ledgers, at several later clocks and graces
// (zero included), past deadline + not updated = tasks_timed_out and
// overdue deliveries = deliveries_failed + deliveries_not_applicable; and
// the apply then writes deadline_exceeded on exactly the past-deadline
// ones. The doctor's part is the doctor's report.
func TestMetricsStuckCountsEqualReconcileDryRun(t *testing.T) {
	nonZero, notUpdatedBeforeDeadline := 0, 0
	for seed := int64(1); seed <= 24; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(-seed))
			l, clk, ids := randomLedger(t, seed, 80)
			for round := 0; round < 4; round++ {
				clk.now += float64(rng.Intn(8))
				active, delivery := float64(rng.Intn(10)), float64(rng.Intn(10))
				if round == 3 {
					active, delivery = 0, 0
				}
				m, err := l.metricsSeconds(t.Context(), active, delivery)
				if err != nil {
					t.Fatal(err)
				}
				doc, err := l.Doctor()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(m.Doctor, doc) {
					t.Fatalf("metrics' doctor %+v, doctor %+v", m.Doctor, doc)
				}
				dry, err := l.reconcileFloat(active, delivery, true)
				if err != nil {
					t.Fatal(err)
				}
				if !m.StuckKnown || m.RunningPastDeadline+m.RunningNotUpdated != dry.TasksTimedOut ||
					m.DeliveriesOverdue != dry.DeliveriesFailed+dry.DeliveriesNotApplicable ||
					m.ActiveGrace != time.Duration(active)*time.Second || m.DeliveryGrace != time.Duration(delivery)*time.Second {
					t.Fatalf("round %d, graces %v/%v: metrics %+v, dry run %+v", round, active, delivery, m, dry)
				}
				nonZero += m.RunningPastDeadline * m.RunningNotUpdated * m.DeliveriesOverdue
				for _, id := range ids {
					task, _ := l.Get(id)
					if task.Status == StatusRunning && task.DeadlineAt != nil && *row(task).DeadlineAt > clk.now && row(task).UpdatedAt <= clk.now-active {
						notUpdatedBeforeDeadline++
					}
				}
				if round%2 == 1 {
					running := map[string]bool{}
					for _, id := range ids {
						task, _ := l.Get(id)
						running[id] = task.Status == StatusRunning
					}
					if _, err := l.reconcileFloat(active, delivery, false); err != nil {
						t.Fatal(err)
					}
					pastDeadline := 0
					for _, id := range ids {
						task, _ := l.Get(id)
						if running[id] && task.TerminalCode == codeDeadlineExceeded {
							pastDeadline++
						}
					}
					if pastDeadline != m.RunningPastDeadline {
						t.Fatalf("apply timed out %d past their deadline, metrics said %d", pastDeadline, m.RunningPastDeadline)
					}
				}
			}
		})
	}
	if nonZero == 0 || notUpdatedBeforeDeadline == 0 {
		t.Fatalf("too tame: %d rounds with every stuck count above zero, %d tasks stale before their deadline", nonZero, notUpdatedBeforeDeadline)
	}
}

// When a dry-run reconcile would refuse (a damaged row, a clock behind a
// stored time), the metrics still answer, with the doctor's report and
// the stuck work unknown; an invalid grace is InvalidInput.
func TestMetricsWhenReconcileCannotDecide(t *testing.T) {
	l, tasks := damagedLedger(t)
	m, err := l.Metrics(MetricsOptions{})
	if err != nil || !m.StuckKnown || !m.Doctor.Healthy || m.ActiveGrace != DefaultGrace || m.DeliveryGrace != DefaultGrace {
		t.Fatalf("healthy ledger: %+v, %v", m, err)
	}
	damageRow(t, l, tasks["running"].ID, "updated_at = 'text'")
	m, err = l.Metrics(MetricsOptions{ActiveGrace: new(time.Duration(0))})
	if err != nil || m.StuckKnown || m.Doctor.Healthy || m.RunningNotUpdated != 0 || m.ActiveGrace != 0 {
		t.Fatalf("damaged row: %+v, %v", m, err)
	}
	if _, err := l.Reconcile(ReconcileOptions{DryRun: true}); !errors.Is(err, ErrStateConflict) {
		t.Fatalf("the dry run answers %v", err)
	}

	// Past its deadline (1010) at 1500, but last heartbeat at 2000: the
	// timeout would move the task back in time.
	l2, clk, _ := openTest(t)
	task, _ := l2.Create(timeoutSeconds(CreateParams{}, 10))
	l2.Start(task.ID)
	clk.now = 2000
	l2.Heartbeat(task.ID)
	clk.now = 1500
	if _, err := l2.Reconcile(ReconcileOptions{DryRun: true}); !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("the dry run answers %v", err)
	}
	m, err = l2.Metrics(MetricsOptions{ActiveGrace: new(time.Duration(0))})
	if err != nil || m.StuckKnown || !m.Doctor.Healthy {
		t.Fatalf("clock behind: %+v, %v", m, err)
	}
	if _, err := l2.Metrics(MetricsOptions{ActiveGrace: new(-time.Second)}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("negative grace: %v", err)
	}
	if _, err := l2.metricsSeconds(t.Context(), 0, -1); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("negative seconds: %v", err)
	}
}

// A Duration grace reaches the reconcile as the float nearest to it. Each
// of these graces lands one float off when converted with
// Duration.Seconds, which adds two rounded floats, or as float64(d)/1e9,
// which rounds the nanoseconds first.
func TestGraceDurationsReachTheNearestFloat(t *testing.T) {
	for _, ns := range []int64{1768507280, 1680280718, 36598598956, 5577006791947779410, 3916589616287113937} {
		d := time.Duration(ns)
		want, err := strconv.ParseFloat(fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9), 64)
		if err != nil {
			t.Fatal(err)
		}
		var g *graceSeconds
		active, delivery, err := g.resolve(&d, &d)
		if err != nil {
			t.Fatal(err)
		}
		if active != want || delivery != want {
			t.Errorf("grace %d ns judged as %v and %v s, want %v", ns, active, delivery, want)
		}
	}
}
