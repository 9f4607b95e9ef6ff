package ledger

import (
	"context"
	"errors"

	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
)

// serverDoctor is DoctorContext on a server: the same report, from the
// same per-row rules (taskStateOK, taskTimesOK) and the same event chain
// rule (eventPosition), over one read-only snapshot. The store opened the
// ledger only after its schema matched, so the schema is v2; quick_check
// holds the store's StorageCheck (docs/design/ledger-on-postgresql.md).
// Unlike on SQLite, a read that fails ends the doctor with an error
// rather than a count: a failed statement aborts the server's
// transaction, so nothing after it could be read anyway, and an error is
// never a healthy report.
func (l *Ledger) serverDoctor(ctx context.Context) (DoctorReport, error) {
	var rep DoctorReport
	err := l.serverRead(ctx, func(tx serverstore.ReadTx) error {
		var err error
		rep, err = serverDoctorIn(tx, l.doctorPage())
		return err
	})
	if err != nil {
		return DoctorReport{}, err
	}
	return rep, nil
}

// doctorPageRows is how many tasks one page of the server's doctor reads,
// and how many events one read of their events takes at most.
const doctorPageRows = 4096

// serverDoctorIn is the doctor's pass inside a read transaction of the
// store (the doctor's, or metrics'). It reads the tasks in pages by id
// and, with each page, the events of the ids the page spans (those of
// tasks that do not exist included), so what it holds is one page, and
// each statement reads a page's worth of rows: its memory does not grow
// with the ledger, and no statement's time does either. The snapshot is
// one, so the pages together are the ledger at one instant.
func serverDoctorIn(tx serverstore.ReadTx, pageRows int) (DoctorReport, error) {
	rep := newDoctorReport()
	err := func() error {
		rep.SchemaVersion, rep.SchemaOK = 2, true
		ok, err := tx.StorageCheck()
		if err != nil {
			return err
		}
		if !ok {
			rep.QuickCheckOK = false
		}
		// The events come ordered by task id, so the events of one task
		// that does not exist come together: one inconsistency per id.
		lastUnknown, anyUnknown := "", false
		var after *string
		for {
			page, err := tx.DoctorTasks(after, pageRows)
			if err != nil {
				return err
			}
			more := len(page) == pageRows
			rows := make([]doctorTask, len(page))
			index := make(map[string]int64, len(page))
			ids := make([]string, 0, len(page))
			for i := range page {
				rows[i] = rowValues(page[i].Row)
				id, ok := asText(rows[i].id)
				if !ok {
					return internal("doctor", errors.New("a task id that is not text"))
				}
				index[id] = int64(i)
				ids = append(ids, id)
			}
			chains := newChainStates(int64(len(rows)), 0, int64(len(rows))-1)
			q := serverstore.EventRange{Above: after, Rows: pageRows}
			if more {
				q.Through = &ids[len(ids)-1]
			}
			for {
				events, err := tx.EventsByTask(q)
				if err != nil {
					return err
				}
				for _, ev := range events {
					rep.EventCount++
					owner, ok := index[ev.TaskID]
					if !ok {
						// As on SQLite: one inconsistency per unknown id,
						// and each such event breaks the events' foreign
						// key.
						rep.ForeignKeyErrorCount++
						if !anyUnknown || ev.TaskID != lastUnknown {
							rep.EventInconsistencyCount++
						}
						lastUnknown, anyUnknown = ev.TaskID, true
						continue
					}
					// Only the stored time counts here: no Time is made of it.
					e := Event{Kind: EventKind(ev.Kind), From: ev.From, To: ev.To, Code: ev.Code, occurredSeconds: ev.OccurredAt}
					chains.advance(owner, int64(eventPosition(taskOfValues(&rows[owner]), e)))
				}
				if len(events) < q.Rows {
					break
				}
				last := events[len(events)-1]
				q.AfterTask, q.AfterSequence = last.TaskID, last.Sequence
			}
			for i := range rows {
				checkServerTask(&rep, &rows[i], page[i], chains.intact(int64(i), chainLength(&rows[i])))
			}
			cycles, err := tx.ParentCycles(ids)
			if err != nil {
				return err
			}
			rep.ParentCycleCount += cycles
			if !more {
				return nil
			}
			after = &ids[len(ids)-1]
		}
	}()
	if err != nil {
		return DoctorReport{}, err
	}
	rep.Healthy = rep.QuickCheckOK && rep.SchemaOK && rep.OrphanCount == 0 && rep.ParentCycleCount == 0 &&
		rep.ForeignKeyErrorCount == 0 && rep.StateInconsistencyCount == 0 && rep.TimestampInconsistencyCount == 0 &&
		rep.EventInconsistencyCount == 0 && rep.DoctorErrorCount == 0
	return rep, nil
}

// checkServerTask counts one task row: its states, its value and time
// checks, its parent, and its chain of events (intact or not).
func checkServerTask(rep *DoctorReport, d *doctorTask, read serverstore.DoctorTask, chainIntact bool) {
	rep.TaskCount++
	countStates(rep, d)
	timesOK := taskTimesOK(d)
	if _, ok := asText(d.parent); ok {
		switch {
		case !read.ParentFound:
			// An orphan also breaks the tasks' foreign key, as
			// SQLite's foreign_key_check(tasks) counts it.
			rep.OrphanCount++
			rep.ForeignKeyErrorCount++
		default:
			created, cok := asTime(d.created)
			pc, pok := asTime(read.ParentCreated)
			if timesOK && cok && pok && created < pc {
				timesOK = false // a child created before its parent
			}
		}
	}
	if !timesOK {
		rep.TimestampInconsistencyCount++
	}
	if !chainIntact {
		rep.EventInconsistencyCount++
	}
}

// taskOfValues reads a row's values as a Task for the chain rule
// without checking them first (a row the checks refuse still owns its
// events, as on SQLite): a value of another type reads as its zero or
// nil, and no event's values equal those.
func taskOfValues(d *doctorTask) taskRow {
	t := taskRow{}
	t.ID, _ = asText(d.id)
	status, _ := asText(d.status)
	delivery, _ := asText(d.delivery)
	t.Status, t.DeliveryStatus = Status(status), DeliveryStatus(delivery)
	t.CreatedAt, _ = asTime(d.created)
	t.StartedAt = anyTime(d.started)
	t.EndedAt = anyTime(d.ended)
	t.DeliveryUpdatedAt, _ = asTime(d.dup)
	if c, ok := asText(d.tcode); ok {
		t.TerminalCode = &c
	}
	if c, ok := asText(d.dcode); ok {
		t.DeliveryCode = &c
	}
	return t
}

// anyTime is a nullable time column as the chain compares it: nil only
// for NULL, any number (infinities included) as itself, as SQLite's
// "started_at IS NOT NULL" and value comparisons read it.
func anyTime(v any) *float64 {
	f, ok := optNumber(v)
	if !ok {
		return nil
	}
	return f
}

// serverMetrics is MetricsContext on a server: the doctor's pass and a
// dry-run reconcile's examination in one read-only snapshot, the clock
// read after the doctor's reads as on SQLite.
func (l *Ledger) serverMetrics(ctx context.Context, activeGrace, deliveryGrace float64) (MetricsReport, error) {
	var rep MetricsReport
	err := l.serverRead(ctx, func(tx serverstore.ReadTx) error {
		d, err := serverDoctorIn(tx, l.doctorPage())
		if err != nil {
			return err
		}
		rep = MetricsReport{Doctor: d, ActiveGrace: durationOf(activeGrace), DeliveryGrace: durationOf(deliveryGrace)}
		if !d.SchemaOK || !d.QuickCheckOK {
			return nil
		}
		return rep.countStuck(serverExamine(tx, activeGrace, deliveryGrace, nil))
	})
	if err != nil {
		return MetricsReport{}, err
	}
	return rep, nil
}

// doctorPage is the server doctor's page size: doctorPageRows unless a
// test set another.
func (l *Ledger) doctorPage() int {
	if l.plans.doctorPage > 0 {
		return l.plans.doctorPage
	}
	return doctorPageRows
}
