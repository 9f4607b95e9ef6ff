package ledger

import (
	"context"

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
		rep, err = serverDoctorIn(tx)
		return err
	})
	if err != nil {
		return DoctorReport{}, err
	}
	return rep, nil
}

// serverDoctorIn is the doctor's pass inside a read transaction of the
// store (the doctor's, or metrics').
func serverDoctorIn(tx serverstore.ReadTx) (DoctorReport, error) {
	rep := newDoctorReport()
	err := func() error {
		rep.SchemaVersion, rep.SchemaOK = 2, true
		ok, err := tx.StorageCheck()
		if err != nil {
			return err
		}
		if !ok {
			rep.QuickCheck = "failed"
		}
		var rows []doctorTask
		index := map[string]int64{}
		if err := tx.EveryTask(func(row serverstore.Row) error {
			d := rowValues(row)
			if id, ok := asText(d.id); ok {
				index[id] = int64(len(rows))
			}
			rows = append(rows, d)
			return nil
		}); err != nil {
			return err
		}
		chains := newChainStates(int64(len(rows)), 0, int64(len(rows))-1)
		unknown := map[string]bool{}
		if err := tx.EveryEvent(func(ev serverstore.Event) error {
			rep.EventCount++
			owner, ok := index[ev.TaskID]
			if !ok {
				// As on SQLite: one inconsistency per unknown id, and
				// each such event breaks the events' foreign key.
				rep.ForeignKeyErrorCount++
				if !unknown[ev.TaskID] {
					unknown[ev.TaskID] = true
					rep.EventInconsistencyCount++
				}
				return nil
			}
			// Only the stored time counts here: no Time is made of it.
			e := Event{Kind: EventKind(ev.Kind), From: ev.From, To: ev.To, Code: ev.Code, occurredSeconds: ev.OccurredAt}
			chains.advance(owner, int64(eventPosition(taskOfValues(&rows[owner]), e)))
			return nil
		}); err != nil {
			return err
		}
		var edges []parentEdge
		for i := range rows {
			d := &rows[i]
			rep.TaskCount++
			if s, ok := d.status.(string); ok {
				if _, known := rep.TaskStatusCounts[Status(s)]; known {
					rep.TaskStatusCounts[Status(s)]++
				}
			}
			if s, ok := d.delivery.(string); ok {
				if _, known := rep.DeliveryStatusCounts[DeliveryStatus(s)]; known {
					rep.DeliveryStatusCounts[DeliveryStatus(s)]++
				}
			}
			if !taskStateOK(d) {
				rep.StateInconsistencyCount++
			}
			timesOK := taskTimesOK(d)
			if parent, ok := asText(d.parent); ok {
				p, found := index[parent]
				switch {
				case !found:
					// An orphan also breaks the tasks' foreign key, as
					// SQLite's foreign_key_check(tasks) counts it.
					rep.OrphanCount++
					rep.ForeignKeyErrorCount++
				default:
					edges = append(edges, parentEdge{child: int64(i), parent: p})
					created, cok := asTime(d.created)
					pc, pok := asTime(rows[p].created)
					if timesOK && cok && pok && created < pc {
						timesOK = false // a child created before its parent
					}
				}
			}
			if !timesOK {
				rep.TimestampInconsistencyCount++
			}
			if !chains.intact(int64(i), chainLength(d)) {
				rep.EventInconsistencyCount++
			}
		}
		rep.ParentCycleCount = cyclesOf(edges)
		return nil
	}()
	if err != nil {
		return DoctorReport{}, err
	}
	rep.Healthy = rep.QuickCheck == "ok" && rep.SchemaOK && rep.OrphanCount == 0 && rep.ParentCycleCount == 0 &&
		rep.ForeignKeyErrorCount == 0 && rep.StateInconsistencyCount == 0 && rep.TimestampInconsistencyCount == 0 &&
		rep.EventInconsistencyCount == 0 && rep.DoctorErrorCount == 0
	return rep, nil
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
		d, err := serverDoctorIn(tx)
		if err != nil {
			return err
		}
		rep = MetricsReport{Doctor: d, ActiveGrace: durationOf(activeGrace), DeliveryGrace: durationOf(deliveryGrace)}
		if !d.SchemaOK || d.QuickCheck != "ok" {
			return nil
		}
		return rep.countStuck(serverExamine(tx, activeGrace, deliveryGrace, nil))
	})
	if err != nil {
		return MetricsReport{}, err
	}
	return rep, nil
}
