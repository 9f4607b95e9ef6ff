package ledger_test

import (
	"fmt"
	"reflect"
	"strings"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/ledger"
	model "github.com/stateguard/stateguard/model/ledger"
)

var (
	listStatuses   = []string{"queued", "running", "succeeded", "failed", "timed_out", "cancelled"}
	listDeliveries = []string{"pending", "delivered", "failed", "not_applicable"}
)

// List: a random filter (states, delivery states, times around the
// clock, a parent, a starting position, sometimes a bad value) paged
// through with a small random page size and a random plan: every page, and
// its next position, equals the model's page, and the pages joined equal
// the model's filter of its tasks in id order.
func (mc *machine) List(t *rapid.T) {
	var f ledger.ListFilter
	var mf model.ListFilter
	for _, s := range rapid.SliceOfN(rapid.SampledFrom(listStatuses), 0, 3).Draw(t, "statuses") {
		f.Statuses = append(f.Statuses, ledger.Status(s))
		mf.Statuses = append(mf.Statuses, s)
	}
	for _, s := range rapid.SliceOfN(rapid.SampledFrom(listDeliveries), 0, 2).Draw(t, "deliveries") {
		f.Deliveries = append(f.Deliveries, ledger.DeliveryStatus(s))
		mf.Deliveries = append(mf.Deliveries, s)
	}
	// Times on and around the clock, where < and <= differ.
	when := func(label string) *float64 {
		if !rapid.Bool().Draw(t, label) {
			return nil
		}
		v := mc.clock.now + rapid.SampledFrom([]float64{-1e5, -600, -0.5, 0, 0.001, 600}).Draw(t, label+"Offset")
		return &v
	}
	// In the stored form, as the command line hands them over.
	mf.UpdatedBefore, mf.EndedBefore = when("updatedBefore"), when("endedBefore")
	if mf.UpdatedBefore != nil {
		f.SetUpdatedBeforeSeconds(*mf.UpdatedBefore)
	}
	if mf.EndedBefore != nil {
		f.SetEndedBeforeSeconds(*mf.EndedBefore)
	}
	if rapid.IntRange(0, 3).Draw(t, "byParent") == 0 {
		f.ParentID, mf.ParentID = mc.target(t, "parent")
	}
	if rapid.IntRange(0, 3).Draw(t, "fromPosition") == 0 {
		f.After, mf.After = mc.target(t, "after")
	}
	f.Limit = rapid.IntRange(0, 4).Draw(t, "limit")
	mf.Limit = f.Limit
	switch rapid.IntRange(0, 9).Draw(t, "bad") {
	case 0:
		f.Statuses, mf.Statuses = append(f.Statuses, "Queued"), append(mf.Statuses, "Queued")
	case 1:
		f.Deliveries, mf.Deliveries = append(f.Deliveries, "done"), append(mf.Deliveries, "done")
	case 2:
		f.Limit = rapid.SampledFrom([]int{-1, 1001}).Draw(t, "badLimit")
		mf.Limit = f.Limit
	}
	plan := rapid.SampledFrom([]string{"", "index", "scan"}).Draw(t, "plan")
	ledger.SetListPlan(mc.l, plan)
	mc.logf(t, "list %s plan=%q", listText(f), plan)
	first := mf
	var joined []model.Task
	for pages := 0; ; pages++ {
		got, gerr := mc.l.List(f)
		want, wantNext, werr := mc.m.List(mf)
		if classOf(gerr) != classOf(werr) {
			t.Fatalf("list page %d: ledger %s (%v), model %s (%v)", pages, classOf(gerr), gerr, classOf(werr), werr)
		}
		if gerr != nil {
			return
		}
		if len(got.Tasks) != len(want) || got.Next != wantNext {
			t.Fatalf("list page %d: ledger %d tasks next %q, model %d next %q", pages, len(got.Tasks), got.Next, len(want), wantNext)
		}
		for i := range want {
			if g := toModel(got.Tasks[i]); !reflect.DeepEqual(g, want[i]) {
				t.Fatalf("list page %d, task %d differs\nledger %s\nmodel  %s", pages, i, show(g), show(want[i]))
			}
		}
		joined = append(joined, want...)
		if got.Next == "" {
			break
		}
		f.After, mf.After = got.Next, wantNext
	}
	// All pages joined: the model's filter of all its tasks after the
	// first position, in id order, as one page.
	whole := first
	whole.Limit = model.ListMaxLimit
	everything, next, err := mc.m.List(whole)
	if err != nil || next != "" {
		t.Fatalf("model: %v, next %q", err, next)
	}
	if !reflect.DeepEqual(joined, everything) && len(joined)+len(everything) > 0 {
		t.Fatalf("list: pages joined hold %d tasks, the model's filter %d", len(joined), len(everything))
	}
	t.Logf("  -> %d tasks", len(joined))
}

func listText(f ledger.ListFilter) string {
	var b strings.Builder
	fmt.Fprintf(&b, "statuses=%v deliveries=%v", f.Statuses, f.Deliveries)
	if f.UpdatedBefore != nil {
		fmt.Fprintf(&b, " updated<%v", *f.UpdatedBefore)
	}
	if f.EndedBefore != nil {
		fmt.Fprintf(&b, " ended<%v", *f.EndedBefore)
	}
	fmt.Fprintf(&b, " parent=%q after=%q limit=%d", f.ParentID, f.After, f.Limit)
	return b.String()
}
