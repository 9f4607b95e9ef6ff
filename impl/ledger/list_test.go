package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// explainPlan returns SQLite's query plan for q with args.
func explainPlan(t *testing.T, l *Ledger, q string, args []any) string {
	t.Helper()
	rows, err := l.conn.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "\n")
}

// TestListPlansUseTheIndexes: each filter's index plan reads the index
// that serves it (the schema's own three; no schema change), the count
// that chooses the plan reads that index alone, and the walk along the id
// reads the primary key's index from the position on and sorts nothing.
func TestListPlansUseTheIndexes(t *testing.T) {
	l, _, _ := openTest(t)
	// One task after every position below, so the walk has a window.
	if _, err := l.Create(CreateParams{TaskID: "ffffffff-0000-4000-8000-000000000001"}); err != nil {
		t.Fatal(err)
	}
	at := 100.0
	parent := "00000000-0000-4000-8000-000000000001"
	filters := []struct {
		name  string
		f     ListFilter
		index string
	}{
		{"status", ListFilter{Statuses: []Status{StatusQueued, StatusTimedOut}}, "tasks_status_idx"},
		{"status and updated", ListFilter{Statuses: []Status{StatusRunning}, UpdatedBefore: timePtr(at)}, "tasks_status_idx"},
		{"updated alone", ListFilter{UpdatedBefore: timePtr(at)}, "tasks_status_idx"},
		{"delivery", ListFilter{Deliveries: []DeliveryStatus{DeliveryPending}}, "tasks_delivery_idx"},
		{"delivery and ended", ListFilter{Deliveries: []DeliveryStatus{DeliveryPending}, EndedBefore: timePtr(at)}, "tasks_delivery_idx"},
		{"ended alone", ListFilter{EndedBefore: timePtr(at)}, "tasks_delivery_idx"},
		{"parent", ListFilter{ParentID: parent, After: parent}, "tasks_parent_idx"},
		{"nothing", ListFilter{After: parent}, ""},
	}
	for _, c := range filters {
		t.Run(c.name, func(t *testing.T) {
			q, err := newListQuery(c.f)
			if err != nil {
				t.Fatal(err)
			}
			paths := q.paths()
			if c.index != "" {
				if len(paths) == 0 || paths[0].index != c.index {
					t.Fatalf("paths %v, want %s first", paths, c.index)
				}
				where, args := renderTerms(paths[0].terms, false)
				count := explainPlan(t, l, `SELECT count(*) FROM (SELECT 1 FROM tasks INDEXED BY `+c.index+` WHERE `+where+` LIMIT ?)`, append(args, 1))
				if !strings.Contains(count, "COVERING INDEX "+c.index) {
					t.Errorf("the count reads more than %s:\n%s", c.index, count)
				}
				l.plans.list = "index"
				sqlText, args := planned(t, l, q)
				if plan := explainPlan(t, l, sqlText, args); !strings.Contains(plan, "SEARCH tasks USING INDEX "+c.index+" (") {
					t.Errorf("index plan does not search %s:\n%s", c.index, plan)
				}
			}
			l.plans.list = "scan"
			sqlText, args := planned(t, l, q)
			plan := explainPlan(t, l, sqlText, args)
			if !strings.Contains(plan, "sqlite_autoindex_tasks_1") || strings.Contains(plan, "TEMP B-TREE") ||
				(c.f.After != "") != strings.Contains(plan, "sqlite_autoindex_tasks_1 (id>?") {
				t.Errorf("the walk does not read along the id from the position:\n%s", plan)
			}
		})
	}
}

// planned returns the statement and arguments List's plan chooses for q.
func planned(t *testing.T, l *Ledger, q *listQuery) (sqlText string, args []any) {
	t.Helper()
	err := l.lockedReadTx(context.Background(), "list", true, func(tx *txn) error {
		read, err := q.plan(tx)
		sqlText, args = read.sql, read.args
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sqlText, args
}

// TestListRefusesBadInput: unknown states, ids that are no UUID, a time
// that is not finite and a page size out of range are InvalidInput, with a
// reason that names no value.
func TestListRefusesBadInput(t *testing.T) {
	l, _, _ := openTest(t)
	nan, inf := 0.0, 0.0
	nan, inf = nan/nan, 1/inf
	for _, c := range []struct {
		f      ListFilter
		reason string
	}{
		{ListFilter{Statuses: []Status{"Queued"}}, "unknown task state"},
		{ListFilter{Deliveries: []DeliveryStatus{""}}, "unknown delivery state"},
		{ListFilter{ParentID: "not-a-uuid"}, ""},
		{ListFilter{After: "5eed"}, ""},
		{updatedBeforeSeconds(nan), "a time is not a finite number"},
		{endedBeforeSeconds(inf), "a time is not a finite number"},
		{ListFilter{Limit: -1}, "page size must be 1 to 1000"},
		{ListFilter{Limit: 1001}, "page size must be 1 to 1000"},
	} {
		_, err := l.List(c.f)
		if !errors.Is(err, ErrInvalidInput) || (c.reason != "" && Reason(err) != c.reason) {
			t.Errorf("%+v: %v", c.f, err)
		}
	}
	if _, err := l.List(ListFilter{Limit: 1000}); err != nil {
		t.Errorf("limit 1000: %v", err)
	}
}

// TestListAllBesideWrites pages with ListAll through tasks that writers
// change and add to between the pages: every task that matches the filter
// from the first page to the last is seen exactly once, in id order, and
// breaking out of the loop ends the listing.
func TestListAllBesideWrites(t *testing.T) {
	l, clk, _ := openTest(t)
	var ids []string
	for i := 0; i < 20; i++ {
		task, err := l.Create(CreateParams{TaskID: fmt.Sprintf("00000000-0000-4000-8000-%012d", 10*i+5)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	f := ListFilter{Statuses: []Status{StatusQueued, StatusRunning}, Limit: 3}
	seen := map[string]int{}
	var order []string
	n := 0
	for task, err := range l.ListAll(f) {
		if err != nil {
			t.Fatal(err)
		}
		seen[task.ID]++
		order = append(order, task.ID)
		// Between reads: start a task (it still matches, and its
		// updated_at moves), and add one before and one after the
		// position.
		clk.now++
		if _, err := l.Start(ids[(7*n)%len(ids)]); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{fmt.Sprintf("00000000-0000-4000-8000-%012d", 10*n+1), fmt.Sprintf("00000000-0000-4000-8000-%012d", 10*n+9)} {
			if n >= 5 {
				break // the listing must end: stop adding ahead of it
			}
			if _, err := l.Create(CreateParams{TaskID: id}); err != nil {
				t.Fatal(err)
			}
		}
		if n++; n > 100 {
			t.Fatal("the listing does not end")
		}
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("task %s seen %d times", id, seen[id])
		}
	}
	if !slices.IsSorted(order) {
		t.Errorf("not in id order: %v", order)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("task %s seen %d times", id, k)
		}
	}
	got := 0
	for _, err := range l.ListAll(ListFilter{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if got++; got == 3 {
			break
		}
	}
	if got != 3 {
		t.Fatalf("break after 3 gave %d", got)
	}
}

// TestListWalkWindowEnds: when the walk along the id is chosen (more
// matches than the bound) but the matches are bunched after its window,
// the page is read through the index instead, and is the same page: here
// 12 succeeded tasks at the end of 40 ids, pages of 2.
func TestListWalkWindowEnds(t *testing.T) {
	l, _, _ := openTest(t)
	id := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }
	for i := 1; i <= 40; i++ {
		if _, err := l.Create(CreateParams{TaskID: id(i)}); err != nil {
			t.Fatal(err)
		}
		if i > 28 {
			if _, err := l.CloseTask(id(i), StatusSucceeded, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, plan := range []string{"", "scan", "index"} {
		l.plans.list = plan
		f := ListFilter{Statuses: []Status{StatusSucceeded}, Limit: 2}
		var got []string
		for pages := 0; ; pages++ {
			page, err := l.List(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range page.Tasks {
				got = append(got, task.ID)
			}
			if page.Next == "" {
				break
			}
			if pages > 20 {
				t.Fatal("the listing does not end")
			}
			f.After = page.Next
		}
		var want []string
		for i := 29; i <= 40; i++ {
			want = append(want, id(i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("plan %q: got %v", plan, got)
		}
	}
}

// updatedBeforeSeconds selects the tasks updated before seconds, given in
// the stored form.
func updatedBeforeSeconds(seconds float64) ListFilter {
	var f ListFilter
	f.SetUpdatedBeforeSeconds(seconds)
	return f
}

// endedBeforeSeconds selects the tasks that ended before seconds, given
// in the stored form.
func endedBeforeSeconds(seconds float64) ListFilter {
	var f ListFilter
	f.SetEndedBeforeSeconds(seconds)
	return f
}
