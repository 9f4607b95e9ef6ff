package ledger

import (
	"context"
	"errors"

	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
)

// serverPrune is PruneContext on a server: the same candidates, the same
// rule for a tree (prunable, every task of it) and the same counts as on
// SQLite, in batches of the same bounds. Each batch is one transaction:
// an apply first keeps every other writer from the tasks (LockTasks),
// then reads the next candidate roots after the cursor, reads their trees
// in a few recursive reads, judges them, and removes the chosen trees and
// all their events in two statements; a dry run makes the same batch in a
// read-only snapshot and counts the events instead. Judging and removing
// under one lock, a child another worker creates meanwhile either waits
// for the batch or makes its tree ineligible, as on SQLite. The server
// has an index of events by task, so no plan of events ahead is needed.
func (l *Ledger) serverPrune(ctx context.Context, cutoff float64, dryRun bool) (PruneReport, error) {
	rep := PruneReport{DryRun: dryRun, Applied: !dryRun}
	var cur serverPruneCursor
	for !cur.done {
		b := serverPruneBatch{cursor: cur}
		run := func(tx serverstore.ReadTx, w serverstore.WriteTx) error {
			if w != nil {
				if err := w.LockTasks(); err != nil {
					return err
				}
			}
			b = serverPruneBatch{cursor: cur} // a transaction may be tried again
			if err := b.judge(tx, cutoff, l.plans.pruneBatch); err != nil || len(b.ids) == 0 {
				return err
			}
			if w == nil {
				n, err := tx.CountEvents(b.ids)
				b.events = n
				return err
			}
			tasks, events, err := w.DeleteTasks(b.ids)
			if err != nil {
				return err
			}
			if tasks != len(b.ids) {
				return internal("prune", errors.New("removed rows differ from the trees read"))
			}
			b.events = events
			return nil
		}
		var err error
		if dryRun {
			err = l.serverRead(ctx, func(tx serverstore.ReadTx) error { return run(tx, nil) })
		} else {
			err = l.serverWrite(ctx, func(tx serverstore.WriteTx) error { return run(tx, tx) })
		}
		if err != nil {
			if dryRun {
				return PruneReport{}, err
			}
			return rep, err
		}
		rep.TreesExamined += b.examined
		rep.TreesRemoved += b.removed
		rep.TreesRetained += b.examined - b.removed
		rep.TasksRemoved += len(b.ids)
		rep.EventsRemoved += b.events
		cur = b.cursor
	}
	return rep, nil
}

// serverPruneCursor is where the next batch continues in the candidates'
// order: settled delivery state (index into pruneSettled), then ended_at,
// then id by its bytes.
type serverPruneCursor struct {
	state int
	ended *float64 // nil before the first candidate of the state
	id    string
	done  bool
}

// serverPruneBatch is one batch: its position, counts and the tasks it
// removes.
type serverPruneBatch struct {
	cursor                    serverPruneCursor
	examined, removed, events int
	ids                       []string
}

// serverTreeChunk is how many candidates' trees one read asks for: the
// server sorts a read's rows before the first arrives, so a batch that
// fills up early reads little past what it takes.
const serverTreeChunk = 512

// errBatchFull ends a read of trees when the batch holds enough tasks.
var errBatchFull = errors.New("ledger: prune batch full")

// judge reads the trees of the next candidates from b.cursor and keeps
// the ids of those that go, moving the cursor past every candidate it
// examined. Every row read is checked against the row rules (a damaged
// one is StateConflict) until its tree is known to stay.
func (b *serverPruneBatch) judge(tx serverstore.ReadTx, cutoff float64, bounds [2]int) error {
	maxRoots, maxTasks := windowBound(bounds[0], pruneBatchRoots), windowBound(bounds[1], pruneBatchTasks)
	roots, err := b.nextRoots(tx, cutoff, maxRoots)
	if err != nil {
		return err
	}
	if len(roots) == 0 {
		b.cursor.done = true
		return nil
	}
	for start := 0; start < len(roots) && len(b.ids) < maxTasks; start += serverTreeChunk {
		chunk := roots[start:min(start+serverTreeChunk, len(roots))]
		ids := make([]string, len(chunk))
		for i, r := range chunk {
			ids[i] = r.id
		}
		judged, keep := -1, false
		var tree []string
		settle := func() {
			if judged >= 0 && keep {
				b.removed++
				b.ids = append(b.ids, tree...)
			}
		}
		err := tx.Trees(ids, func(root int, row serverstore.Row) error {
			if root != judged {
				settle()
				if len(b.ids) >= maxTasks {
					return errBatchFull
				}
				if root != judged+1 {
					return internal("prune", errors.New("a candidate's tree was not read"))
				}
				judged, keep, tree = root, true, tree[:0]
				b.examined++
				b.cursor = chunk[root]
			}
			if !keep {
				return nil
			}
			task, err := taskFromRow(row)
			if err != nil {
				return err
			}
			if !prunable(task, cutoff) {
				keep = false
				return nil
			}
			tree = append(tree, task.ID)
			return nil
		})
		switch {
		case errors.Is(err, errBatchFull):
			return nil
		case err != nil:
			return err
		}
		settle()
		if judged != len(chunk)-1 {
			return internal("prune", errors.New("a candidate's tree was not read"))
		}
	}
	return nil
}

// nextRoots lists up to maxRoots candidate roots after b.cursor as
// positions, moving on to the next settled state when one runs out.
func (b *serverPruneBatch) nextRoots(tx serverstore.ReadTx, cutoff float64, maxRoots int) ([]serverPruneCursor, error) {
	var out []serverPruneCursor
	cur := b.cursor
	for cur.state < len(pruneSettled) && len(out) < maxRoots {
		limit := maxRoots - len(out)
		rows, err := tx.PruneRoots(serverstore.PruneQuery{Delivery: string(pruneSettled[cur.state]), Before: cutoff, AfterEnded: cur.ended, AfterID: cur.id, Rows: limit})
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			id, idOK := row[0].(string)
			ended, endedOK := row[10].(float64)
			if !idOK || !endedOK {
				return nil, errDamagedRow
			}
			out = append(out, serverPruneCursor{state: cur.state, ended: &ended, id: id})
		}
		if len(rows) < limit {
			cur = serverPruneCursor{state: cur.state + 1}
		}
	}
	return out, nil
}
