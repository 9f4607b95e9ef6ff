package ledger_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, to read the rows with ledgerrows
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	model "github.com/stateguard/stateguard/model/ledger"
)

// serverDamages are edits a damaged server ledger may have had, each of
// the n-th task or event (by id, by sequence; modulo their counts). The
// foreign keys are off for the editing connection (replica role), so a
// parent or an event's task may be missing; the rows' CHECKs still hold,
// and an edit they refuse is left out.
var serverDamages = []string{
	// a parent cycle, or a task moved under another tree
	`UPDATE tasks SET parent_id = (SELECT id FROM tasks ORDER BY id OFFSET $2 % (SELECT count(*) FROM tasks) LIMIT 1)
		WHERE id = (SELECT id FROM tasks ORDER BY id OFFSET $1 % (SELECT count(*) FROM tasks) LIMIT 1)`,
	// a cycle of two: a child's parent made the child's child
	`UPDATE tasks SET parent_id = c.id FROM (SELECT id, parent_id FROM tasks WHERE parent_id IS NOT NULL
			ORDER BY id OFFSET $1 % greatest(1, (SELECT count(parent_id) FROM tasks)) + 0 * $2 LIMIT 1) AS c
		WHERE tasks.id = c.parent_id`,
	// an orphan
	`UPDATE tasks SET parent_id = 'ffffffff-0000-4000-8000-' || lpad(to_hex($2::int), 12, '0')
		WHERE id = (SELECT id FROM tasks ORDER BY id OFFSET $1 % (SELECT count(*) FROM tasks) LIMIT 1)`,
	// events of a task that does not exist (two, so they share an id)
	`INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
		SELECT 'eeeeeeee-0000-4000-8000-' || lpad(to_hex($1::int), 12, '0'), 'created', NULL, 'queued', $2::float8, 'created'
		FROM generate_series(1, 2)`,
	// an event of another time, or removed
	`UPDATE task_events SET occurred_at = occurred_at + 1 + $2
		WHERE sequence = (SELECT sequence FROM task_events ORDER BY sequence OFFSET $1 % (SELECT count(*) FROM task_events) LIMIT 1)`,
	`DELETE FROM task_events
		WHERE sequence = (SELECT sequence FROM task_events ORDER BY sequence OFFSET $1 % (SELECT count(*) FROM task_events) LIMIT 1 + 0 * $2)`,
	// a parent created after its child, a version below the history
	`UPDATE tasks SET created_at = created_at + 1e6 + $2
		WHERE id = (SELECT parent_id FROM tasks WHERE parent_id IS NOT NULL ORDER BY id OFFSET $1 % greatest(1, (SELECT count(parent_id) FROM tasks)) LIMIT 1)`,
	`UPDATE tasks SET version = 0 * $2
		WHERE id = (SELECT id FROM tasks ORDER BY id OFFSET $1 % (SELECT count(*) FROM tasks) LIMIT 1)`,
}

// TestServerDoctorPagesMatchTheChecker: over reachable ledgers on the
// server (the laws' programs) with up to three damages (serverDamages),
// the doctor reading pages of 1 to 4 tasks reports what it reports in one
// page, and its counts are model/ledger's checker's over the same rows:
// the pages' seams (a parent, a cycle, a chain of events or the events of
// a missing task on either side of one) change nothing.
func TestServerDoctorPagesMatchTheChecker(t *testing.T) {
	e := serverRun(t)
	db, err := sql.Open("pgx", e.server.url+"&search_path="+e.server.schema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	params := lawParams(e)
	params.MinSuccessfulTests = max(*propsN/4, 10) // a quarter: each case reads its ledger five times
	props := gopter.NewProperties(params)
	damaged, cycles := 0, 0
	defer func() { t.Logf("%d of the cases damaged, %d with a parent cycle", damaged, cycles) }()
	props.Property("paged doctor = one page = the checker", prop.ForAll(
		func(prog []int, damages []int, page int) string {
			w, err := e.buildWorld(prog)
			if err != nil {
				return "build: " + err.Error()
			}
			if _, err := e.server.conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
				return err.Error()
			}
			for i, d := range damages {
				// A refused edit (a CHECK, an empty table) changes nothing.
				e.server.conn.Exec(ctx, serverDamages[d%len(serverDamages)], d/len(serverDamages), i+1)
			}
			if _, err := e.server.conn.Exec(ctx, `RESET session_replication_role`); err != nil {
				return err.Error()
			}
			tasks, events, err := ledgerrows.Read(db)
			if err != nil {
				return err.Error()
			}
			want := model.Check(tasks, events)
			if !want.Healthy() {
				damaged++
			}
			if want.ParentCycleCount > 0 {
				cycles++
			}
			l, _ := w.open(true)
			ledger.SetDoctorPage(l, 0)
			whole, err := l.Doctor()
			if err != nil {
				return "doctor: " + err.Error()
			}
			ledger.SetDoctorPage(l, page)
			paged, err := l.Doctor()
			ledger.SetDoctorPage(l, 0)
			if err != nil {
				return "paged doctor: " + err.Error()
			}
			wholeJSON, _ := json.Marshal(whole)
			pagedJSON, _ := json.Marshal(paged)
			if string(pagedJSON) != string(wholeJSON) {
				return fmt.Sprintf("pages of %d:\n%s\none page:\n%s\nin %s", page, pagedJSON, wholeJSON, programString(prog))
			}
			if got := doctorCounts(whole); !reflect.DeepEqual(got, want) {
				return fmt.Sprintf("doctor %+v\nchecker %+v\nin %s", got, want, programString(prog))
			}
			return ""
		},
		genProgram, gen.SliceOfN(3, gen.IntRange(0, 1<<10)).Map(func(d []int) []int { return d[:d[0]%4] }), gen.IntRange(1, 4),
	))
	props.TestingRun(t)
}

// doctorCounts is the doctor's report in the checker's shape.
func doctorCounts(d ledger.DoctorReport) model.Counts {
	tasks, deliveries := map[string]int{}, map[string]int{}
	for k, v := range d.TaskStatusCounts {
		tasks[string(k)] = v
	}
	for k, v := range d.DeliveryStatusCounts {
		deliveries[string(k)] = v
	}
	return model.Counts{
		TaskCount: d.TaskCount, EventCount: d.EventCount,
		TaskStatusCounts: tasks, DeliveryStatusCounts: deliveries,
		OrphanCount: d.OrphanCount, ParentCycleCount: d.ParentCycleCount, ForeignKeyErrorCount: d.ForeignKeyErrorCount,
		StateInconsistencyCount: d.StateInconsistencyCount, TimestampInconsistencyCount: d.TimestampInconsistencyCount,
		EventInconsistencyCount: d.EventInconsistencyCount,
	}
}
