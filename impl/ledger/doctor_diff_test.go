package ledger_test

// Differential test of the doctor against model/ledger's Checker on rows
// written directly into the file (CHECK constraints and foreign keys off):
// parent cycles of any length, orphans, non-finite times, events of missing
// tasks, chains with one value changed. Every value keeps its type, so the
// rows read back as model values (internal/testsupport/ledgerrows).

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/ledger"
	model "github.com/stateguard/stateguard/model/ledger"
)

// writeRows puts tasks and events into a fresh v2 ledger file, as given.
func writeRows(t fataler, dir string, tasks []model.Task, events []model.Event) string {
	return writeRowsAt(t, dir, tasks, nil, events)
}

// writeRowsAt is writeRows with each task at the given rowid (nil: the
// next one).
func writeRowsAt(t fataler, dir string, tasks []model.Task, rowids []int64, events []model.Event) string {
	t.Helper()
	p := filepath.Join(dir, "l.sqlite")
	l, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{"PRAGMA foreign_keys=OFF", "PRAGMA ignore_check_constraints=1"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	ptr := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	fptr := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	for i, k := range tasks {
		var rowid any
		if rowids != nil {
			rowid = rowids[i]
		}
		req := 0
		if k.DeliveryRequired {
			req = 1
		}
		if _, err := db.Exec(`INSERT INTO tasks (rowid, id, parent_id, status, delivery_status, delivery_required, payload_hash,
			timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at, terminal_code, delivery_code, version)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, rowid, k.ID, ptr(k.ParentID), k.Status, k.DeliveryStatus, req, ptr(k.PayloadHash),
			fptr(k.TimeoutSeconds), k.CreatedAt, fptr(k.StartedAt), k.UpdatedAt, fptr(k.EndedAt), fptr(k.DeadlineAt),
			k.DeliveryUpdatedAt, ptr(k.TerminalCode), ptr(k.DeliveryCode), k.Version); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range events {
		if _, err := db.Exec(`INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code) VALUES (?,?,?,?,?,?)`,
			e.TaskID, e.Kind, ptr(e.From), e.To, e.OccurredAt, ptr(e.Code)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// fataler is what both *testing.T and *rapid.T offer.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// diffDir is a fresh private directory under root.
func diffDir(t fataler, root string) string {
	dir, err := os.MkdirTemp(root, "l")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// doctorVsChecker reads the file back and compares the doctor's counts
// with the Checker's.
func doctorVsChecker(t fataler, p string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	tasks, events, err := readRows(db)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := model.Check(tasks, events)
	l, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, err := l.Doctor()
	if err != nil {
		t.Fatal(err)
	}
	got := [10]int{d.TaskCount, d.EventCount, d.OrphanCount, d.ParentCycleCount, d.ForeignKeyErrorCount,
		d.StateInconsistencyCount, d.TimestampInconsistencyCount, d.EventInconsistencyCount, d.DoctorErrorCount, b2i(d.Healthy)}
	want := [10]int{c.TaskCount, c.EventCount, c.OrphanCount, c.ParentCycleCount, c.ForeignKeyErrorCount,
		c.StateInconsistencyCount, c.TimestampInconsistencyCount, c.EventInconsistencyCount, 0, b2i(c.Healthy())}
	if got != want {
		t.Fatalf("doctor %v\nchecker %v\n(task, event, orphan, cycle, fk, state, time, event-inc, doctor-err, healthy)", got, want)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func diffID(n int) string { return fmt.Sprintf("d0c70000-0000-4000-8000-%012x", n) }

func genTime(t *rapid.T, label string) float64 {
	return rapid.SampledFrom([]float64{0, 1, 2, 3, 5, 10, 10, 10, 100, math.Inf(1), math.Inf(-1)}).Draw(t, label)
}

func genOptTime(t *rapid.T, label string) *float64 {
	if rapid.Bool().Draw(t, label+"?") {
		return nil
	}
	v := genTime(t, label)
	return &v
}

func genCode(t *rapid.T, label string) *string {
	c := rapid.SampledFrom([]string{"-", "-", "completed", "worker_failed", "restart_stale", "transport_acknowledged",
		"delivery_grace_expired", "internal_task", "", "bogus"}).Draw(t, label)
	if c == "-" {
		return nil
	}
	return &c
}

func genTask(t *rapid.T, i, pool int) model.Task {
	k := model.Task{ID: diffID(i)}
	if rapid.IntRange(0, 2).Draw(t, "hasParent") > 0 {
		p := diffID(rapid.IntRange(0, pool).Draw(t, "parent")) // pool itself names no task
		k.ParentID = &p
	}
	k.Status = rapid.SampledFrom([]string{"queued", "running", "succeeded", "failed", "timed_out", "cancelled", "bogus"}).Draw(t, "status")
	k.DeliveryStatus = rapid.SampledFrom([]string{"pending", "delivered", "failed", "not_applicable", "bogus"}).Draw(t, "delivery")
	k.DeliveryRequired = rapid.Bool().Draw(t, "required")
	if rapid.Bool().Draw(t, "timeout?") {
		v := rapid.SampledFrom([]float64{0, 5, 5, -1, math.Inf(1)}).Draw(t, "timeout")
		k.TimeoutSeconds = &v
	}
	k.CreatedAt = genTime(t, "created")
	k.StartedAt = genOptTime(t, "started")
	k.UpdatedAt = genTime(t, "updated")
	k.EndedAt = genOptTime(t, "ended")
	k.DeadlineAt = genOptTime(t, "deadline")
	k.DeliveryUpdatedAt = genTime(t, "dup")
	k.TerminalCode = genCode(t, "tcode")
	k.DeliveryCode = genCode(t, "dcode")
	k.Version = int64(rapid.IntRange(0, 4).Draw(t, "version"))
	return k
}

// TestDoctorMatchesCheckerOnCraftedRows compares the doctor with the
// Checker on generated rows that need not be reachable.
func TestDoctorMatchesCheckerOnCraftedRows(t *testing.T) {
	root := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 9).Draw(t, "tasks")
		var tasks []model.Task
		for i := 0; i < n; i++ {
			tasks = append(tasks, genTask(t, i, n))
		}
		var events []model.Event
		for _, k := range tasks {
			for _, e := range model.ExpectedEvents(k) {
				if math.IsNaN(e.OccurredAt) {
					e.OccurredAt = 7
				}
				switch rapid.IntRange(0, 9).Draw(t, "edit") {
				case 0:
					continue // dropped
				case 1:
					e.Code = genCode(t, "ecode")
				case 2:
					e.OccurredAt = genTime(t, "eat")
				case 3:
					e.TaskID = diffID(n + rapid.IntRange(0, 2).Draw(t, "unknown"))
				}
				events = append(events, e)
			}
		}
		if len(events) > 0 && rapid.IntRange(0, 4).Draw(t, "dup") == 0 {
			events = append(events, events[rapid.IntRange(0, len(events)-1).Draw(t, "dupOf")])
		}
		if len(events) > 1 && rapid.Bool().Draw(t, "swap") {
			i := rapid.IntRange(0, len(events)-2).Draw(t, "at")
			events[i], events[i+1] = events[i+1], events[i]
		}
		// Rowids: dense from 1; far apart (and below zero, or spanning
		// more than any array could hold, or the whole int64 range, whose
		// size wraps to zero), which the doctor's chain table keeps in a
		// map instead of an array; or dense across zero, an array whose
		// first rowid is negative.
		var rowids []int64
		switch gap := rapid.SampledFrom([]int64{0, 1, 2, 1000, -7919, 1 << 59, math.MinInt64}).Draw(t, "gap"); gap {
		case 0:
		case 1:
			for i := range tasks {
				rowids = append(rowids, int64(i-len(tasks)/2))
			}
		case math.MinInt64:
			for i := range tasks {
				rowids = append(rowids, int64(i+1))
			}
			if len(rowids) > 1 {
				rowids[0], rowids[len(rowids)-1] = math.MinInt64, math.MaxInt64
			}
		default:
			for i := range tasks {
				rowids = append(rowids, int64(i+1)*gap+int64(rapid.IntRange(0, 1).Draw(t, "jitter")))
			}
		}
		doctorVsChecker(t, writeRowsAt(t, diffDir(t, root), tasks, rowids, events))
	})
}

// TestDoctorMatchesCheckerOnFixedRows pins the shapes the generated test
// found: each row is damaged (a state or time finding), and the event
// chain must still be judged value for value as the Checker judges it.
func TestDoctorMatchesCheckerOnFixedRows(t *testing.T) {
	str := func(s string) *string { return &s }
	flt := func(f float64) *float64 { return &f }
	closed := func(edit func(*model.Task)) model.Task {
		k := model.Task{ID: diffID(1), Status: "succeeded", DeliveryStatus: "delivered", DeliveryRequired: true,
			CreatedAt: 1, UpdatedAt: 2, EndedAt: flt(2), DeliveryUpdatedAt: 3, Version: 2,
			TerminalCode: str("completed"), DeliveryCode: str("transport_acknowledged")}
		edit(&k)
		return k
	}
	type fixedCase struct {
		task   model.Task
		events func([]model.Event) []model.Event
	}
	cases := map[string]fixedCase{
		"created at +Inf, event at +Inf":   {closed(func(k *model.Task) { k.CreatedAt = math.Inf(1) }), nil},
		"empty delivery code, event alike": {closed(func(k *model.Task) { k.DeliveryCode = str("") }), nil},
		"empty terminal code, event alike": {closed(func(k *model.Task) { k.TerminalCode = str("") }), nil},
		"empty terminal code, event without": {closed(func(k *model.Task) { k.TerminalCode = str("") }),
			func(es []model.Event) []model.Event { es[1].Code = nil; return es }},
		"empty delivery code, event without": {closed(func(k *model.Task) { k.DeliveryCode = str("") }),
			func(es []model.Event) []model.Event { es[2].Code = nil; return es }},
	}
	cases["queued with an infinite timeout"] = fixedCase{model.Task{ID: diffID(1), Status: "queued", DeliveryStatus: "pending", DeliveryRequired: true,
		TimeoutSeconds: flt(math.Inf(1)), CreatedAt: 1, UpdatedAt: 1, DeliveryUpdatedAt: 1}, nil}
	cases["running with an unknown delivery state"] = fixedCase{model.Task{ID: diffID(1), Status: "running", DeliveryStatus: "bogus",
		CreatedAt: 1, StartedAt: flt(1), UpdatedAt: 1, DeliveryUpdatedAt: 1, Version: 2}, nil}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			events := model.ExpectedEvents(c.task)
			if c.events != nil {
				events = c.events(events)
			}
			doctorVsChecker(t, writeRows(t, diffDir(t, t.TempDir()), []model.Task{c.task}, events))
		})
	}
}
