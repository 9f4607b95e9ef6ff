package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// pruneSequence adds, after doctorSequence, trees prune tells apart: a
// finished tree of three (one internal), a finished root whose child
// still runs, a root whose delivery is pending, and a finished root that
// ends later than the others.
func pruneSequence(t *testing.T, l *ledger.Ledger, now *float64) {
	t.Helper()
	doctorSequence(t, l, now)
	do := func(what string, _ ledger.Task, err error) {
		t.Helper()
		*now += 30
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	finish := func(id string, status ledger.Status, delivery ledger.DeliveryStatus) {
		t.Helper()
		if status == ledger.StatusSucceeded || status == ledger.StatusFailed {
			task, err := l.Start(id)
			do("start", task, err)
		}
		task, err := l.CloseTask(id, status, ledger.NoCode)
		do("close", task, err)
		if delivery != ledger.DeliveryPending {
			task, err = l.SetDelivery(id, delivery, ledger.NoCode)
			do("deliver", task, err)
		}
	}
	whole, wholeA, wholeB := poolID(20), poolID(21), poolID(22)
	kept, keptChild := poolID(23), poolID(24)
	pending, late := poolID(25), poolID(26)
	task, err := l.Create(ledger.CreateParams{TaskID: whole})
	do("create", task, err)
	task, err = l.Create(ledger.CreateParams{TaskID: wholeA, ParentID: whole})
	do("create", task, err)
	task, err = l.Create(ledger.CreateParams{TaskID: wholeB, ParentID: wholeA, Internal: true})
	do("create", task, err)
	task, err = l.Create(ledger.CreateParams{TaskID: kept})
	do("create", task, err)
	task, err = l.Create(ledger.CreateParams{TaskID: keptChild, ParentID: kept})
	do("create", task, err)
	task, err = l.Create(ledger.CreateParams{TaskID: pending})
	do("create", task, err)
	task, err = l.Create(ledger.CreateParams{TaskID: late, Internal: true})
	do("create", task, err)
	finish(wholeB, ledger.StatusSucceeded, ledger.DeliveryNotApplicable)
	finish(wholeA, ledger.StatusFailed, ledger.DeliveryFailed)
	finish(whole, ledger.StatusCancelled, ledger.DeliveryDelivered)
	finish(kept, ledger.StatusSucceeded, ledger.DeliveryDelivered)
	task, err = l.Start(keptChild)
	do("start", task, err)
	finish(pending, ledger.StatusSucceeded, ledger.DeliveryPending)
	*now += 10_000
	finish(late, ledger.StatusCancelled, ledger.DeliveryNotApplicable)
}

// pruneCalls runs the same prunes on a ledger and answers each report as
// JSON, one a line, then the doctor's report and the ids left.
func pruneCalls(t *testing.T, l *ledger.Ledger, now float64) string {
	t.Helper()
	var out []string
	for _, call := range []struct {
		before float64
		dry    bool
	}{
		{now - 20_000, true}, {now - 5_000, true}, {now - 5_000, false}, {now - 5_000, false},
		{now + 1, true}, {now + 1, false}, {now + 1, false},
	} {
		before := call.before
		rep, err := l.Prune(ledgerrows.PruneSeconds(before, call.dry))
		if err != nil {
			t.Fatalf("prune before %v (dry run %v): %v", before, call.dry, err)
		}
		js, _ := json.Marshal(rep)
		out = append(out, string(js))
	}
	doc, err := l.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, reportJSON(t, doc))
	var ids []string
	for task, err := range l.ListAll(ledger.ListFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	out = append(out, strings.Join(ids, " "))
	return strings.Join(out, "\n")
}

// TestPruneMatchesSQLite: after the same operations, the same prunes
// (dry runs, applies, a repeat that finds the retained trees again, a
// cutoff that leaves a late tree and one that takes it) report the same
// on both engines, and leave the same tasks and the same doctor report.
func TestPruneMatchesSQLite(t *testing.T) {
	url := pgtest.Database(t)
	now := 1_000_000.0
	server := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{testClock: func() float64 { return now }})
	pruneSequence(t, server, &now)
	got := pruneCalls(t, server, now)

	fileNow := 1_000_000.0
	file, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.sqlite"), ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows}, func() float64 { return fileNow }))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pruneSequence(t, file, &fileNow)
	want := pruneCalls(t, file, fileNow)
	if got != want {
		t.Fatalf("prunes on the server\n%s\non SQLite\n%s", got, want)
	}
	// The sequence must give prune something to tell apart.
	lines := strings.Split(got, "\n")
	if !strings.Contains(lines[2], `"trees_removed":3`) || !strings.Contains(lines[3], `"trees_retained":2`) || !strings.Contains(lines[5], `"trees_removed":1`) {
		t.Fatalf("the sequence prunes too little:\n%s", got)
	}
}

// sqlID is the SQL of a canonical id made from the integer expression n.
const sqlID = `lpad(to_hex(%[1]s), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(%[1]s), 12, '0')`

// cloneTask inserts count copies of the template task (its row and its
// events, times unchanged), the copy k (from 1) with the id of
// base+k and the parent parentSQL gives (an expression of k, or NULL).
func cloneTask(t *testing.T, conn *pgx.Conn, schema, template string, base, count int, parentSQL string) {
	t.Helper()
	ctx := context.Background()
	s := pgx.Identifier{schema}.Sanitize()
	id := fmt.Sprintf(sqlID, fmt.Sprintf("(%d + k)", base))
	cols := `status, delivery_status, delivery_required, payload_hash, timeout_seconds, created_at, started_at,
		updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version`
	if _, err := conn.Exec(ctx, `INSERT INTO `+s+`.tasks (id, parent_id, `+cols+`)
		SELECT `+id+`, `+parentSQL+`, `+cols+` FROM `+s+`.tasks, generate_series(1, $2) AS k WHERE id = $1 ORDER BY k`, template, count); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO `+s+`.task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
		SELECT `+id+`, event_kind, from_value, to_value, occurred_at, code FROM `+s+`.task_events, generate_series(1, $2) AS k
		WHERE task_id = $1 ORDER BY k, sequence`, template, count); err != nil {
		t.Fatal(err)
	}
}

// TestPruneInBatches: a ledger larger than one batch, made by copying
// rows a ledger wrote: 8,300 finished single tasks (three batches of
// candidates, each read in several chunks), one finished tree of 5,002
// tasks (larger than a batch's bound of tasks: removed alone and whole)
// ending before 200 finished single tasks of its state, and 40 roots kept
// by a running child. The dry run and the apply report the counts the
// copies make; afterwards exactly the kept trees are left, and the doctor
// is healthy.
func TestPruneInBatches(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	now := 1_000_000.0
	schema := "batches"
	l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema, testClock: func() float64 { now += 1; return now }})
	create := func(id, parent string, internal bool) {
		t.Helper()
		if _, err := l.Create(ledger.CreateParams{TaskID: id, ParentID: parent, Internal: internal}); err != nil {
			t.Fatal(err)
		}
	}
	settle := func(id string, delivery ledger.DeliveryStatus) {
		t.Helper()
		if _, err := l.CloseTask(id, ledger.StatusCancelled, ledger.NoCode); err != nil {
			t.Fatal(err)
		}
		if _, err := l.SetDelivery(id, delivery, ledger.NoCode); err != nil {
			t.Fatal(err)
		}
	}
	bigRoot, bigChild, single, delivered, keptRoot, keptChild := poolID(1), poolID(2), poolID(3), poolID(4), poolID(5), poolID(6)
	create(bigRoot, "", false)
	create(bigChild, bigRoot, true)
	create(keptRoot, "", false)
	create(keptChild, keptRoot, true)
	if _, err := l.Start(keptChild); err != nil {
		t.Fatal(err)
	}
	settle(keptRoot, ledger.DeliveryFailed)
	settle(bigChild, ledger.DeliveryNotApplicable)
	settle(bigRoot, ledger.DeliveryDelivered)
	create(delivered, "", false)
	settle(delivered, ledger.DeliveryDelivered)
	create(single, "", true)
	settle(single, ledger.DeliveryNotApplicable)

	conn := direct(t, url)
	const singles, children, deliveredAfter, kept = 8300, 5000, 200, 40
	cloneTask(t, conn, schema, single, 0x01000000, singles, "NULL")
	cloneTask(t, conn, schema, bigChild, 0x02000000, children, "'"+bigRoot+"'")
	cloneTask(t, conn, schema, delivered, 0x03000000, deliveredAfter, "NULL")
	cloneTask(t, conn, schema, keptRoot, 0x04000000, kept, "NULL")
	cloneTask(t, conn, schema, keptChild, 0x05000000, kept, fmt.Sprintf(sqlID, "(67108864 + k)"))
	before, err := l.Doctor()
	if err != nil || !before.Healthy {
		t.Fatalf("the copied ledger is not sound: %s, %v", reportJSON(t, before), err)
	}

	events := func(id string) int {
		h, err := l.History(id)
		if err != nil {
			t.Fatal(err)
		}
		return len(h)
	}
	removedTrees := (singles + 1) + 1 + (deliveredAfter + 1)
	want := ledger.PruneReport{
		TreesExamined: removedTrees + kept + 1,
		TreesRemoved:  removedTrees,
		TreesRetained: kept + 1,
		TasksRemoved:  (singles + 1) + (children + 2) + (deliveredAfter + 1),
		EventsRemoved: (singles+1)*events(single) + events(bigRoot) + (children+1)*events(bigChild) + (deliveredAfter+1)*events(delivered),
	}
	// Each removal statement records its transaction and how many tasks
	// it removed: the batches made visible.
	exec(t, url, `CREATE TABLE public.prune_batches (xid bigint, tasks bigint);
		CREATE FUNCTION public.record_batch() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN INSERT INTO public.prune_batches SELECT txid_current(), count(*) FROM removed; RETURN NULL; END $$;
		CREATE TRIGGER record_batch AFTER DELETE ON batches.tasks REFERENCING OLD TABLE AS removed
			FOR EACH STATEMENT EXECUTE FUNCTION public.record_batch()`)
	cutoff := now + 1
	for _, dry := range []bool{true, false} {
		got, err := l.Prune(ledgerrows.PruneSeconds(cutoff, dry))
		if err != nil {
			t.Fatal(err)
		}
		want.DryRun, want.Applied = dry, !dry
		if got != want {
			t.Fatalf("prune (dry run %v): %+v, want %+v", dry, got, want)
		}
	}
	// The tree larger than a batch's bound alone, then the candidates
	// (201 delivered, 41 failed, 8,301 not_applicable) in batches of
	// 4,096 roots, each its own transaction.
	rows, err := conn.Query(ctx, `SELECT (SELECT count(DISTINCT xid) FROM public.prune_batches), tasks FROM public.prune_batches ORDER BY xid`)
	if err != nil {
		t.Fatal(err)
	}
	batches, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Transactions, Tasks int }])
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(batches) != "[{4 5002} {4 4055} {4 4096} {4 351}]" {
		t.Fatalf("batches (transactions, tasks removed): %v", batches)
	}
	exec(t, url, `DROP TRIGGER record_batch ON batches.tasks`)
	var tasks, roots, eventsLeft int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM batches.tasks), (SELECT count(*) FROM batches.tasks WHERE parent_id IS NULL),
		(SELECT count(*) FROM batches.task_events)`).Scan(&tasks, &roots, &eventsLeft); err != nil {
		t.Fatal(err)
	}
	if tasks != 2*(kept+1) || roots != kept+1 || eventsLeft != (kept+1)*(events(keptRoot)+events(keptChild)) {
		t.Fatalf("after the prune: %d tasks, %d roots, %d events; want only the kept trees", tasks, roots, eventsLeft)
	}
	after, err := l.Doctor()
	if err != nil || !after.Healthy || after.TaskCount != 2*(kept+1) {
		t.Fatalf("after the prune: %s, %v", reportJSON(t, after), err)
	}
}
