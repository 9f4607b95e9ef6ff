package ledger

import (
	"slices"
	"testing"
)

// A status filter combined with each other filter selects exactly the
// tasks that match both (and), on every plan (the index the status serves,
// another filter's index, the walk along the id) and across pages: every
// filter set is compared with the same filter applied by hand to every
// stored task.
func TestListStatusCombinedWithAnotherFilter(t *testing.T) {
	l, clk, _ := openTest(t)
	parent, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	// Tasks in every state, some under the parent, with times that differ.
	for i := range 18 {
		clk.now += 10
		p := CreateParams{Internal: i%5 == 0}
		if i%3 == 0 {
			p.ParentID = parent.ID
		}
		task, err := l.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		clk.now += 1
		switch i % 6 {
		case 1:
			_, err = l.Start(task.ID)
		case 2:
			_, err = l.CloseTask(task.ID, StatusSucceeded, CodeCompleted)
		case 3:
			if _, err = l.CloseTask(task.ID, StatusFailed, CodeWorkerFailed); err == nil && !p.Internal {
				_, err = l.SetDelivery(task.ID, DeliveryDelivered, CodeTransportAcknowledged)
			}
		case 4:
			_, err = l.CloseTask(task.ID, StatusCancelled, CodeCallerCancelled)
		case 5:
			if _, err = l.Start(task.ID); err == nil {
				_, err = l.CloseTask(task.ID, StatusTimedOut, CodeDeadlineExceeded)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var all []Task
	for task, err := range l.ListAll(ListFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, task)
	}
	if len(all) != 19 {
		t.Fatalf("%d tasks stored", len(all))
	}
	updatedCut, endedCut := clk.now-90, clk.now-60
	statusSets := [][]Status{{StatusQueued}, {StatusRunning, StatusSucceeded}, {StatusFailed, StatusCancelled, StatusTimedOut}}
	others := map[string]ListFilter{
		"delivery pending":            {Deliveries: []DeliveryStatus{DeliveryPending}},
		"delivery delivered or n/a":   {Deliveries: []DeliveryStatus{DeliveryDelivered, DeliveryNotApplicable}},
		"updated before":              {UpdatedBefore: timePtr(updatedCut)},
		"ended before":                {EndedBefore: timePtr(endedCut)},
		"parent":                      {ParentID: parent.ID},
		"delivery and parent":         {Deliveries: []DeliveryStatus{DeliveryPending}, ParentID: parent.ID},
		"updated before and delivery": {UpdatedBefore: timePtr(updatedCut), Deliveries: []DeliveryStatus{DeliveryNotApplicable, DeliveryPending}},
	}
	nonEmpty := 0
	for name, other := range others {
		for _, statuses := range statusSets {
			f := other
			f.Statuses = statuses
			want := []string{}
			for _, task := range all {
				if matches(task, f) {
					want = append(want, task.ID)
				}
			}
			if len(want) > 0 {
				nonEmpty++
			}
			for _, plan := range []string{"", "index", "scan"} {
				l.plans.list = plan
				got := []string{}
				f.Limit, f.After = 2, ""
				for pages := 0; ; pages++ {
					page, err := l.List(f)
					if err != nil {
						t.Fatal(err)
					}
					for _, task := range page.Tasks {
						got = append(got, task.ID)
					}
					if page.Next == "" || pages > len(all) {
						break
					}
					f.After = page.Next
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s, states %v, plan %q: listed %v, want %v", name, statuses, plan, got, want)
				}
			}
		}
	}
	l.plans.list = ""
	if nonEmpty < 12 {
		t.Fatalf("only %d of the filter sets select anything: the fixture does not tell the filters apart", nonEmpty)
	}
}

// matches is ListFilter's meaning, written out for one task.
func matches(task Task, f ListFilter) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, task.Status) {
		return false
	}
	if len(f.Deliveries) > 0 && !slices.Contains(f.Deliveries, task.DeliveryStatus) {
		return false
	}
	if f.UpdatedBefore != nil && !task.UpdatedAt.Before(*f.UpdatedBefore) {
		return false
	}
	if f.EndedBefore != nil && (task.EndedAt == nil || !task.EndedAt.Before(*f.EndedBefore)) {
		return false
	}
	if f.ParentID != "" && (task.ParentID == nil || *task.ParentID != f.ParentID) {
		return false
	}
	return true
}
