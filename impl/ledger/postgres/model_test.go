package postgres

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	model "github.com/stateguard/stateguard/model/ledger"
)

// poolID names a small set of canonical ids so that operations collide.
func poolID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x9e0000+n, n) }

// className names an answer's class, with the clock-backwards refusal told
// apart from other StateConflicts (a damaged row read back is one too).
func className(err error, invalid, notFound, backwards, conflict error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, invalid):
		return "InvalidInput"
	case errors.Is(err, notFound):
		return "TaskNotFound"
	case errors.Is(err, backwards):
		return "ClockBackwards"
	case errors.Is(err, conflict):
		return "StateConflict"
	}
	return "other: " + err.Error()
}

func engineClass(err error) string {
	return className(err, ledger.ErrInvalidInput, ledger.ErrTaskNotFound, ledger.ErrClockBackwards, ledger.ErrStateConflict)
}

func modelClass(err error) string {
	return className(err, model.ErrInvalidInput, model.ErrTaskNotFound, model.ErrClockBackwards, model.ErrStateConflict)
}

func asModel(t ledger.Task) model.Task { return ledgerrows.FromLedger(t) }

// TestMatchesModel drives a ledger on PostgreSQL and model/ledger with the
// same random create, start, heartbeat, close, delivery, get, children,
// reconcile (applied or dry), history, list and prune (applied or dry)
// calls, and a close with its delivery settled that finishes a task for
// prune, at a
// scripted test clock that sometimes steps back: after every call the
// answer's class, the task returned, every task row and the event log must
// agree. Each check runs in a fresh schema. A failure prints the
// operations (rapid's log) and a replayable seed.
//
// Default: 20 checks (a fresh schema each costs a second or so on a busy
// machine); more with -rapid.checks=N.
func TestMatchesModel(t *testing.T) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if !explicit {
		old := flag.Lookup("rapid.checks").Value.String()
		if err := flag.Set("rapid.checks", "20"); err != nil {
			t.Fatal(err)
		}
		defer flag.Set("rapid.checks", old)
	}
	url := pgtest.Database(t)
	conn := direct(t, url)
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		now := 1_000_000.0
		schema := fmt.Sprintf("model_%d", schemas.Add(1))
		l, err := open(ctx, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema, testClock: func() float64 { return now }})
		if err != nil {
			rt.Fatal(err)
		}
		defer l.Close()
		var m model.Model
		id := func(label string) string { return poolID(rapid.IntRange(0, 2).Draw(rt, label)) }
		code := func(label string) *string {
			c := rapid.SampledFrom([]string{"", "completed", "worker_failed", "deadline_exceeded", "caller_cancelled", "transport_acknowledged", "transport_failed", "internal_task", "bogus_code", "Bad Code"}).Draw(rt, label)
			if c == "" {
				return nil
			}
			return &c
		}
		check := func(op string, got ledger.Task, gotErr error, want model.Task, wantErr error) {
			if engineClass(gotErr) != modelClass(wantErr) {
				rt.Fatalf("%s: engine %s (%v), model %s (%v)", op, engineClass(gotErr), gotErr, modelClass(wantErr), wantErr)
			}
			if gotErr == nil && showTask(asModel(got)) != showTask(want) {
				rt.Fatalf("%s: engine returned %s, model %s", op, showTask(asModel(got)), showTask(want))
			}
		}
		steps := rapid.IntRange(20, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			now += rapid.SampledFrom([]float64{30, -1, 0, 0.5, 700}).Draw(rt, "dt")
			switch rapid.IntRange(0, 11).Draw(rt, "op") {
			case 0:
				var timeout *float64
				if rapid.Bool().Draw(rt, "with timeout") {
					v := rapid.SampledFrom([]float64{0, 1, 60, math.Copysign(0, -1)}).Draw(rt, "timeout")
					timeout = &v
				}
				parent := ""
				if rapid.Bool().Draw(rt, "with parent") {
					parent = id("parent")
				}
				internalTask := rapid.Bool().Draw(rt, "internal")
				tid := id("id")
				got, gotErr := l.Create(ledgerrows.WithOptionalTimeoutSeconds(ledger.CreateParams{TaskID: tid, ParentID: parent, Internal: internalTask}, timeout))
				want, wantErr := m.Create(model.CreateParams{TaskID: tid, ParentID: parent, TimeoutSeconds: timeout, DeliveryRequired: !internalTask}, now)
				check("create", got, gotErr, want, wantErr)
			case 1:
				tid := id("id")
				got, gotErr := l.Start(tid)
				want, wantErr := m.Start(tid, now)
				check("start", got, gotErr, want, wantErr)
			case 2:
				tid := id("id")
				got, gotErr := l.Heartbeat(tid)
				want, wantErr := m.Heartbeat(tid, now)
				check("heartbeat", got, gotErr, want, wantErr)
			case 3:
				tid := id("id")
				status := rapid.SampledFrom([]string{"succeeded", "failed", "timed_out", "cancelled", "running"}).Draw(rt, "status")
				c := code("code")
				got, gotErr := l.CloseTaskOptionalCode(ctx, tid, ledger.Status(status), c)
				want, wantErr := m.CloseCode(tid, status, c, now)
				check("close", got, gotErr, want, wantErr)
			case 4:
				tid := id("id")
				status := rapid.SampledFrom([]string{"delivered", "failed", "not_applicable", "pending"}).Draw(rt, "status")
				c := code("code")
				got, gotErr := l.SetDeliveryOptionalCode(ctx, tid, ledger.DeliveryStatus(status), c)
				want, wantErr := m.SetDeliveryCode(tid, status, c, now)
				check("delivery", got, gotErr, want, wantErr)
			case 5:
				tid := id("id")
				got, gotErr := l.Get(tid)
				want, wantErr := m.Get(tid)
				check("get", got, gotErr, want, wantErr)
			case 6:
				tid := id("id")
				got, gotErr := l.ChildrenOf(tid)
				want, wantErr := m.ChildrenOf(tid)
				if engineClass(gotErr) != modelClass(wantErr) {
					rt.Fatalf("children: engine %s (%v), model %s (%v)", engineClass(gotErr), gotErr, modelClass(wantErr), wantErr)
				}
				var gotText, wantText []string
				for _, task := range got {
					gotText = append(gotText, showTask(asModel(task)))
				}
				for _, task := range want {
					wantText = append(wantText, showTask(task))
				}
				if strings.Join(gotText, "\n") != strings.Join(wantText, "\n") {
					rt.Fatalf("children differ\nengine:\n%s\nmodel:\n%s", strings.Join(gotText, "\n"), strings.Join(wantText, "\n"))
				}
			case 7:
				grace := func(label string) float64 {
					return rapid.SampledFrom([]float64{0, 0.5, 30, 600, 1e10, -1, math.NaN()}).Draw(rt, label)
				}
				active, delivery := grace("active grace"), grace("delivery grace")
				dry := rapid.Bool().Draw(rt, "dry run")
				got, gotErr := ledgerrows.ReconcileSeconds(ctx, l, active, delivery, dry)
				want, wantErr := m.Reconcile(now, active, delivery, dry)
				if engineClass(gotErr) != modelClass(wantErr) {
					rt.Fatalf("reconcile: engine %s (%v), model %s (%v)", engineClass(gotErr), gotErr, modelClass(wantErr), wantErr)
				}
				if gotErr == nil && fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
					rt.Fatalf("reconcile report\nengine %+v\nmodel  %+v", got, want)
				}
			case 8:
				tid := id("id")
				got, gotErr := l.History(tid)
				_, wantErr := m.Get(tid)
				if engineClass(gotErr) != modelClass(wantErr) {
					rt.Fatalf("history: engine %s (%v), model %s (%v)", engineClass(gotErr), gotErr, modelClass(wantErr), wantErr)
				}
				var gotText, wantText []string
				for _, ev := range got {
					gotText = append(gotText, showEvent(tid, string(ev.Kind), ev.From, ev.To, ledgerrows.OccurredAt(ev), ev.Code))
				}
				for _, ev := range m.Events() {
					if ev.TaskID == tid {
						wantText = append(wantText, showEvent(tid, ev.Kind, ev.From, ev.To, ev.OccurredAt, ev.Code))
					}
				}
				if strings.Join(gotText, "\n") != strings.Join(wantText, "\n") {
					rt.Fatalf("history differs\nengine:\n%s\nmodel:\n%s", strings.Join(gotText, "\n"), strings.Join(wantText, "\n"))
				}
			case 9:
				var f ledger.ListFilter
				var mf model.ListFilter
				if rapid.Bool().Draw(rt, "by status") {
					st := rapid.SampledFrom([]string{"queued", "running", "succeeded", "timed_out"}).Draw(rt, "status")
					f.Statuses, mf.Statuses = []ledger.Status{ledger.Status(st)}, []string{st}
				}
				if rapid.Bool().Draw(rt, "by delivery") {
					d := rapid.SampledFrom([]string{"pending", "delivered", "not_applicable"}).Draw(rt, "delivery")
					f.Deliveries, mf.Deliveries = []ledger.DeliveryStatus{ledger.DeliveryStatus(d)}, []string{d}
				}
				if rapid.Bool().Draw(rt, "by update") {
					v := now - rapid.SampledFrom([]float64{0, 30, 700}).Draw(rt, "before")
					f.SetUpdatedBeforeSeconds(v)
					mf.UpdatedBefore = &v
				}
				if rapid.Bool().Draw(rt, "by end") {
					v := now - rapid.SampledFrom([]float64{0, 30}).Draw(rt, "ended before")
					f.SetEndedBeforeSeconds(v)
					mf.EndedBefore = &v
				}
				if rapid.Bool().Draw(rt, "by parent") {
					f.ParentID = id("parent")
					mf.ParentID = f.ParentID
				}
				if rapid.Bool().Draw(rt, "after") {
					f.After = id("after")
					mf.After = f.After
				}
				f.Limit = rapid.IntRange(1, 3).Draw(rt, "limit")
				mf.Limit = f.Limit
				got, gotErr := l.List(f)
				want, next, wantErr := m.List(mf)
				if engineClass(gotErr) != modelClass(wantErr) {
					rt.Fatalf("list: engine %s (%v), model %s (%v)", engineClass(gotErr), gotErr, modelClass(wantErr), wantErr)
				}
				var gotText, wantText []string
				for _, task := range got.Tasks {
					gotText = append(gotText, showTask(asModel(task)))
				}
				for _, task := range want {
					wantText = append(wantText, showTask(task))
				}
				if strings.Join(gotText, "\n") != strings.Join(wantText, "\n") || got.Next != next {
					rt.Fatalf("list %+v differs\nengine (next %q):\n%s\nmodel (next %q):\n%s", mf, got.Next, strings.Join(gotText, "\n"), next, strings.Join(wantText, "\n"))
				}
			case 10:
				before := now - rapid.SampledFrom([]float64{0, 30, 700, -1, math.NaN()}).Draw(rt, "ended before")
				dry := rapid.Bool().Draw(rt, "dry run")
				got, gotErr := l.Prune(ledgerrows.PruneSeconds(before, dry))
				want, wantErr := m.Prune(before, dry)
				if engineClass(gotErr) != modelClass(wantErr) {
					rt.Fatalf("prune: engine %s (%v), model %s (%v)", engineClass(gotErr), gotErr, modelClass(wantErr), wantErr)
				}
				if gotErr == nil && fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
					rt.Fatalf("prune report\nengine %+v\nmodel  %+v", got, want)
				}
			case 11:
				// Random closes and deliveries rarely finish a task for
				// prune: close one as cancelled, then settle its delivery
				// as its kind allows.
				tid := id("id")
				got, gotErr := l.CloseTaskOptionalCode(ctx, tid, ledger.StatusCancelled, nil)
				want, wantErr := m.CloseCode(tid, "cancelled", nil, now)
				check("close to finish", got, gotErr, want, wantErr)
				if wantErr == nil {
					settled := "delivered"
					if !want.DeliveryRequired {
						settled = "not_applicable"
					}
					got, gotErr = l.SetDeliveryOptionalCode(ctx, tid, ledger.DeliveryStatus(settled), nil)
					want, wantErr = m.SetDeliveryCode(tid, settled, nil, now)
					check("settle to finish", got, gotErr, want, wantErr)
				}
			}
			compareRows(rt, conn, schema, l, &m)
		}
		// The doctor over what the steps left: healthy, and its counts
		// the model's.
		rep, err := l.Doctor()
		if err != nil {
			rt.Fatal(err)
		}
		statuses := map[ledger.Status]int{}
		for s, n := range rep.TaskStatusCounts {
			if n > 0 {
				statuses[s] = n
			}
		}
		wantStatuses := map[ledger.Status]int{}
		for _, task := range m.Tasks() {
			wantStatuses[ledger.Status(task.Status)]++
		}
		if !rep.Healthy || rep.TaskCount != len(m.Tasks()) || rep.EventCount != len(m.Events()) || fmt.Sprint(statuses) != fmt.Sprint(wantStatuses) {
			rt.Fatalf("doctor %+v; model %d tasks, %d events, %v", rep, len(m.Tasks()), len(m.Events()), wantStatuses)
		}
	})
}

// compareRows compares every task row (read through the ledger, which
// checks it) and the event log (read directly, in sequence order; the
// sequences themselves only need to increase) with the model's.
func compareRows(rt *rapid.T, conn *pgx.Conn, schema string, l *ledger.Ledger, m *model.Model) {
	ctx := context.Background()
	table := pgx.Identifier{schema}.Sanitize()
	rows, err := conn.Query(ctx, `SELECT id FROM `+table+`.tasks ORDER BY id COLLATE "C"`)
	if err != nil {
		rt.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		rt.Fatal(err)
	}
	var tasks []string
	for _, id := range ids {
		task, err := l.Get(id)
		if err != nil {
			rt.Fatal(err)
		}
		tasks = append(tasks, showTask(asModel(task)))
	}
	var want []string
	for _, task := range m.Tasks() {
		want = append(want, showTask(task))
	}
	if strings.Join(tasks, "\n") != strings.Join(want, "\n") {
		rt.Fatalf("task rows differ\nengine:\n%s\nmodel:\n%s", strings.Join(tasks, "\n"), strings.Join(want, "\n"))
	}
	rows, err = conn.Query(ctx, `SELECT sequence, task_id, event_kind, coalesce(from_value, 'null'), to_value, occurred_at, coalesce(code, 'null') FROM `+table+`.task_events ORDER BY sequence`)
	if err != nil {
		rt.Fatal(err)
	}
	defer rows.Close()
	var events []string
	last := int64(0)
	for rows.Next() {
		var seq int64
		var id, kind, from, to, code string
		var at float64
		if err := rows.Scan(&seq, &id, &kind, &from, &to, &at, &code); err != nil {
			rt.Fatal(err)
		}
		if seq <= last {
			rt.Fatalf("event sequence %d after %d", seq, last)
		}
		last = seq
		events = append(events, showEvent(id, kind, nullable(from), to, at, nullable(code)))
	}
	if err := rows.Err(); err != nil {
		rt.Fatal(err)
	}
	var wantEvents []string
	for _, ev := range m.Events() {
		wantEvents = append(wantEvents, showEvent(ev.TaskID, ev.Kind, ev.From, ev.To, ev.OccurredAt, ev.Code))
	}
	if strings.Join(events, "\n") != strings.Join(wantEvents, "\n") {
		rt.Fatalf("event logs differ\nengine:\n%s\nmodel:\n%s", strings.Join(events, "\n"), strings.Join(wantEvents, "\n"))
	}
}

// showTask prints a row with its pointers followed, bit-exact for times
// (so -0 and 0 differ).
func showTask(t model.Task) string {
	f := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%v/%x", *p, math.Float64bits(*p))
	}
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("%s parent=%s %s/%s required=%v hash=%s timeout=%s created=%s started=%s updated=%s ended=%s deadline=%s dup=%s tcode=%s dcode=%s v%d",
		t.ID, s(t.ParentID), t.Status, t.DeliveryStatus, t.DeliveryRequired, s(t.PayloadHash), f(t.TimeoutSeconds),
		f(&t.CreatedAt), f(t.StartedAt), f(&t.UpdatedAt), f(t.EndedAt), f(t.DeadlineAt), f(&t.DeliveryUpdatedAt),
		s(t.TerminalCode), s(t.DeliveryCode), t.Version)
}

// nullable reads the text the event query gives for NULL back as nil.
func nullable(s string) *string {
	if s == "null" {
		return nil
	}
	return &s
}

// showEvent prints one event, bit-exact for its time.
func showEvent(taskID, kind string, from *string, to string, at float64, code *string) string {
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("%s %s %s>%s at %v/%x code %s", taskID, kind, s(from), to, at, math.Float64bits(at), s(code))
}
