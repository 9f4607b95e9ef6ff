package ledger

import "testing"

// TestReconcileBoundaries pins the comparisons of contract §5: deadline_at
// <= now times out, updated_at <= now - grace is stale, and ended_at > now
// - grace is retained.
func TestReconcileBoundaries(t *testing.T) {
	l, clk, _ := openTest(t)
	atDeadline, _ := l.Create(CreateParams{TimeoutSeconds: f64(100), DeliveryRequired: true})
	atGrace, _ := l.Create(CreateParams{DeliveryRequired: true})
	fresh, _ := l.Create(CreateParams{DeliveryRequired: true})
	l.Start(atDeadline.ID) // deadline 1100
	l.Start(atGrace.ID)    // updated 1000
	clk.now = 1001
	l.Start(fresh.ID) // updated 1001
	clk.now = 1100
	rep, err := l.Reconcile(100, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	// atDeadline: deadline 1100 <= 1100; atGrace: 1000 <= 1100-100; fresh:
	// 1001 > 1000. Both timed-out deliveries end at now: with grace 0,
	// now > now is false, so they fail.
	if rep.TasksTimedOut != 2 || rep.FreshActiveRetained != 1 || rep.DeliveriesFailed != 2 || rep.PendingDeliveryRetained != 0 {
		t.Fatalf("%+v", rep)
	}
	applied, err := l.Reconcile(100, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if applied.TasksTimedOut != 2 || applied.DeliveriesFailed != 2 {
		t.Fatalf("%+v", applied)
	}
	got, _ := l.Get(atDeadline.ID)
	if *got.TerminalCode != "deadline_exceeded" || *got.DeliveryCode != "delivery_grace_expired" || got.Version != 3 {
		t.Fatalf("%+v", got)
	}
	got, _ = l.Get(atGrace.ID)
	if *got.TerminalCode != "restart_stale" {
		t.Fatalf("%+v", got)
	}
	healthy(t, l)
	// A delivery that ended exactly grace seconds ago is closed; one that
	// ended later is retained.
	clk.now = 1200
	l.CloseTask(fresh.ID, StatusSucceeded, "")
	clk.now = 1300
	if rep, _ := l.Reconcile(100, 100.5, true); rep.PendingDeliveryRetained != 1 {
		t.Fatalf("%+v", rep)
	}
	if rep, _ := l.Reconcile(100, 100, true); rep.DeliveriesFailed != 1 {
		t.Fatalf("%+v", rep)
	}
}
