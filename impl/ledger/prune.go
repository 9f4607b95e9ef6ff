package ledger

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"math"
	"slices"
)

// Prune removes whole task trees that are finished with: a tree is a
// task without a parent and all its descendants, and it is removed, with
// every event of its tasks, when every task in it is terminal, its
// delivery settled (delivered, failed or not_applicable: a state the
// delivery machine never leaves) and its ended_at before the cutoff
// (spec/task-state-guard.md §6.11).
//
// The work is split into batches, each one BEGIN IMMEDIATE transaction
// that looks at the next candidate roots through tasks_delivery_idx,
// reads each candidate's whole tree and removes the trees that qualify.
// The check and the removal of a tree are in the same write transaction,
// so a child another process adds meanwhile either makes the tree
// ineligible (it is queued) or waits for the batch to commit; a tree is
// never split across batches. Writers beside a prune wait at most one
// batch for the write lock.

// PruneOptions are the arguments of Prune.
type PruneOptions struct {
	// EndedBefore is the cutoff in Unix seconds: a tree is removed only
	// when every task in it ended strictly before it. It is required: nil
	// is ErrInvalidInput, as is a value that is not finite.
	EndedBefore *float64
	// DryRun reports what the prune would remove and writes nothing; it
	// works on a read-only ledger.
	DryRun bool
}

// PruneReport holds counts only, never ids. TreesExamined counts the
// candidate roots (tasks without a parent that are themselves terminal,
// settled and ended before the cutoff); each is either removed with its
// tree or retained because some task below it is not.
type PruneReport struct {
	TreesExamined int
	TreesRemoved  int
	TreesRetained int
	TasksRemoved  int
	EventsRemoved int
	DryRun        bool
	Applied       bool
}

// The batch bounds: a batch examines at most pruneBatchRoots candidate
// roots and stops taking trees once it holds pruneBatchTasks tasks to
// remove (a tree larger than that is removed alone, whole, in one batch).
// Each batch also reads task_events once (the schema has no index on
// task_id), so the bounds trade the number of those passes against the
// time a batch holds the write lock (spec §6.11 has the measurements).
const (
	pruneBatchRoots = 4096
	pruneBatchTasks = 4096
)

// pruneSettled are the delivery states a prune accepts, in the order the
// candidates are visited (each one's entries of tasks_delivery_idx).
var pruneSettled = []DeliveryStatus{DeliveryDelivered, DeliveryFailed, DeliveryNotApplicable}

// pruneCursor is where the next batch continues in the candidates' order:
// delivery state (index into pruneSettled), then ended_at, then rowid,
// which is the order of tasks_delivery_idx within one state.
type pruneCursor struct {
	state int
	ended driver.Value // nil before the first candidate of the state
	rowid int64
	done  bool
}

// pruneCandidatesSQL lists the next candidate roots of one settled state
// after a position, in index order (ended_at >= bounds the index range).
const pruneCandidatesSQL = `SELECT rowid, ended_at FROM tasks INDEXED BY tasks_delivery_idx
	WHERE delivery_status = ? AND ended_at < ? AND parent_id IS NULL
	AND ended_at >= ? AND (ended_at > ? OR rowid > ?) ORDER BY ended_at, rowid LIMIT ?`

// pruneFirstCandidatesSQL is pruneCandidatesSQL from the start of a state.
const pruneFirstCandidatesSQL = `SELECT rowid, ended_at FROM tasks INDEXED BY tasks_delivery_idx
	WHERE delivery_status = ? AND ended_at < ? AND parent_id IS NULL ORDER BY ended_at, rowid LIMIT ?`

// pruneTreeSQL reads one tree, its root first, through tasks_parent_idx.
// CROSS JOIN keeps the tree as the outer loop (SQLite's planner otherwise
// may scan tasks against the tree's rows).
// A root has no parent, so no cycle (only in a damaged file) is reachable
// from it and the recursion ends.
const pruneTreeSQL = `WITH RECURSIVE tree(id) AS (SELECT id FROM tasks WHERE rowid = ?
	UNION ALL SELECT c.id FROM tasks c JOIN tree ON c.parent_id = tree.id)
	SELECT ` + taskColumns + ` FROM tree CROSS JOIN tasks USING (id)`

// Prune removes the finished task trees that ended before
// opts.EndedBefore (see PruneOptions and the package comment of
// prune.go), in batches of bounded size, each its own write transaction.
// A dry run makes the same decisions in read transactions and writes
// nothing; with no other writer it reports exactly what the apply then
// removes. A stored row of a tree it reads that breaks the row rules is
// ErrStateConflict. On an error the report counts what the batches
// committed before it (a dry run: nothing).
func (l *Ledger) Prune(opts PruneOptions) (PruneReport, error) {
	return l.PruneContext(context.Background(), opts)
}

// PruneContext is Prune with a context whose cancellation or deadline
// ends the wait for the database and stops the prune between or within
// batches; the batches committed before stay committed.
func (l *Ledger) PruneContext(ctx context.Context, opts PruneOptions) (PruneReport, error) {
	if opts.EndedBefore == nil {
		return PruneReport{}, invalidInput("prune needs a time the trees ended before")
	}
	cutoff := *opts.EndedBefore
	if math.IsNaN(cutoff) || math.IsInf(cutoff, 0) {
		return PruneReport{}, invalidInput("a time is not a finite number")
	}
	if !opts.DryRun {
		if err := l.refuseMutation(); err != nil {
			return PruneReport{}, err
		}
	}
	rep := PruneReport{DryRun: opts.DryRun, Applied: !opts.DryRun}
	var cur pruneCursor
	for batch := 0; !cur.done; batch++ {
		var b pruneBatch
		var err error
		// A dry run counts in a read transaction. An apply first reads:
		// it judges the trees and finds their events (a pass over all of
		// task_events, which has no index on task_id) in a read
		// transaction, beside writers; only then does it take the write
		// lock, judge again and remove. A batch whose read pass finds
		// nothing to remove is not written at all.
		mode := pruneCount
		if !opts.DryRun {
			mode = pruneRead
		}
		err = l.lockedReadTx(ctx, "prune", true, func(t *txn) error {
			b = pruneBatch{cursor: cur} // a read-only read may be retried
			return b.run(t, cutoff, mode, nil)
		})
		if err == nil && !opts.DryRun && len(b.ids) > 0 {
			err = pruneHook(batch, "read")
		}
		if err == nil && !opts.DryRun && len(b.ids) > 0 {
			plan := b
			err = l.prunedWrite(ctx, func(t *txn) error {
				b = pruneBatch{cursor: cur}
				if err := b.run(t, cutoff, pruneApply, &plan); err != nil {
					return err
				}
				return pruneHook(batch, "write")
			})
		}
		if err != nil {
			if opts.DryRun {
				return PruneReport{}, err
			}
			return rep, err
		}
		rep.TreesExamined += b.examined
		rep.TreesRemoved += b.removed
		rep.TreesRetained += b.examined - b.removed
		rep.TasksRemoved += b.tasks
		rep.EventsRemoved += b.events
		cur = b.cursor
		if !opts.DryRun {
			if err := pruneHook(batch, "committed"); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// pruneBatchHook, when a test sets it, runs in each applied batch: after
// the read pass found trees to remove ("read"), inside the write
// transaction after the removals ("write"; an error rolls the batch back
// and ends the prune, as a failure there would), and after the batch
// ("committed"). An error ends the prune there.
var pruneBatchHook func(batch int, phase string) error

func pruneHook(batch int, phase string) error {
	if pruneBatchHook == nil {
		return nil
	}
	return pruneBatchHook(batch, phase)
}

// pruneBatch is one batch's work: where it starts and ends, and its
// counts.
type pruneBatch struct {
	cursor                           pruneCursor
	examined, removed, tasks, events int
	ids                              []string // the tasks it removes
	seqs                             []int64  // the read pass: their events' sequences
	maxSeq                           int64    // the read pass: the largest sequence then
}

// What a batch's run does after judging its trees.
const (
	pruneCount = iota // a dry run: count the trees' events
	pruneRead         // the read pass before an apply: find the trees' events
	pruneApply        // the write: remove the trees and their events
)

// run judges the trees of the next candidates from b.cursor and then, as
// mode says, counts their events, finds them, or removes them. An apply
// is given the read pass's batch (plan): when its own judgement, in the
// write transaction, picked the same trees from the same position, it
// removes the events the read pass found (by sequence, through the
// primary key) and those appended since (sequences above the read pass's
// largest, a range of the primary key); otherwise it finds them itself
// by reading task_events whole. Either way every event of the removed
// tasks goes: an event with a sequence at most the read pass's largest
// was committed before that read began (sequences are given out in
// commit order, one writer at a time, never reused), so the read pass saw
// it.
func (b *pruneBatch) run(t *txn, cutoff float64, mode int, plan *pruneBatch) error {
	if err := b.judge(t, cutoff); err != nil || len(b.ids) == 0 {
		return err
	}
	list, err := json.Marshal(b.ids)
	if err != nil {
		return internal("prune", err)
	}
	switch mode {
	case pruneCount:
		return t.QueryRowContext(t.ctx, `SELECT count(*) FROM task_events WHERE task_id IN (SELECT value FROM json_each(?))`, string(list)).Scan(&b.events)
	case pruneRead:
		if err := t.QueryRowContext(t.ctx, `SELECT ifnull(max(sequence), 0) FROM task_events`).Scan(&b.maxSeq); err != nil {
			return err
		}
		rows, err := t.QueryContext(t.ctx, `SELECT sequence FROM task_events WHERE task_id IN (SELECT value FROM json_each(?))`, string(list))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				return err
			}
			b.seqs = append(b.seqs, seq)
		}
		return rows.Err()
	}
	if plan != nil && sameCursor(b.cursor, plan.cursor) && slices.Equal(b.ids, plan.ids) {
		seqs, err := json.Marshal(plan.seqs)
		if err != nil {
			return internal("prune", err)
		}
		for _, del := range []struct {
			sql  string
			args []any
		}{
			{`DELETE FROM task_events WHERE sequence IN (SELECT value FROM json_each(?))`, []any{string(seqs)}},
			{`DELETE FROM task_events WHERE sequence > ? AND task_id IN (SELECT value FROM json_each(?))`, []any{plan.maxSeq, string(list)}},
		} {
			res, err := t.ExecContext(t.ctx, del.sql, del.args...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			b.events += int(n)
		}
	} else {
		res, err := t.ExecContext(t.ctx, `DELETE FROM task_events WHERE task_id IN (SELECT value FROM json_each(?))`, string(list))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		b.events = int(n)
	}
	res, err := t.ExecContext(t.ctx, `DELETE FROM tasks WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	if err := wantChanged(res, err, len(b.ids)); err != nil {
		return err
	}
	// Foreign keys are off while a batch runs (prunedWrite): this is their
	// check, through tasks_parent_idx. The trees were read whole in this
	// transaction, so no remaining task can name a removed one as parent.
	var orphaned int
	if err := t.QueryRowContext(t.ctx, `SELECT count(*) FROM tasks WHERE parent_id IN (SELECT value FROM json_each(?))`, string(list)).Scan(&orphaned); err != nil {
		return err
	}
	if orphaned != 0 {
		return internal("prune", errOrMismatch(nil))
	}
	return nil
}

// judge reads the trees of the next candidates from b.cursor and keeps
// the ids of those that go, moving the cursor past every candidate it
// examined.
func (b *pruneBatch) judge(t *txn, cutoff float64) error {
	maxTasks := t.l.pruneBatch[1]
	if maxTasks == 0 {
		maxTasks = pruneBatchTasks
	}
	roots, err := b.nextRoots(t, cutoff)
	if err != nil {
		return err
	}
	for _, root := range roots {
		if len(b.ids) >= maxTasks {
			break
		}
		b.cursor.state, b.cursor.ended, b.cursor.rowid = root.state, root.ended, root.rowid
		b.examined++
		tree, ok, err := readPrunableTree(t, root.rowid, cutoff)
		if err != nil {
			return err
		}
		if ok {
			b.removed++
			b.ids = append(b.ids, tree...)
		}
	}
	if len(roots) == 0 {
		b.cursor.done = true
	}
	b.tasks = len(b.ids)
	return nil
}

// sameCursor compares two positions; ended_at is a number there (the
// candidates' query selects only numbers below the cutoff).
func sameCursor(a, b pruneCursor) bool {
	if a.state != b.state || a.rowid != b.rowid || a.done != b.done {
		return false
	}
	switch x := a.ended.(type) {
	case nil:
		return b.ended == nil
	case int64:
		y, ok := b.ended.(int64)
		return ok && x == y
	case float64:
		y, ok := b.ended.(float64)
		return ok && x == y
	}
	return false
}

// pruneRoot is one candidate root and its position in the candidates'
// order.
type pruneRoot struct {
	state int
	ended driver.Value
	rowid int64
}

// nextRoots lists up to pruneBatchRoots candidate roots after b.cursor,
// moving on to the next settled state when one runs out.
func (b *pruneBatch) nextRoots(t *txn, cutoff float64) ([]pruneRoot, error) {
	var out []pruneRoot
	cur := b.cursor
	maxRoots := t.l.pruneBatch[0]
	if maxRoots == 0 {
		maxRoots = pruneBatchRoots
	}
	for cur.state < len(pruneSettled) && len(out) < maxRoots {
		state := string(pruneSettled[cur.state])
		limit := maxRoots - len(out)
		var query string
		var args []any
		if cur.ended == nil {
			query, args = pruneFirstCandidatesSQL, []any{state, cutoff, limit}
		} else {
			query, args = pruneCandidatesSQL, []any{state, cutoff, cur.ended, cur.ended, cur.rowid, limit}
		}
		rows, err := t.QueryContext(t.ctx, query, args...)
		if err != nil {
			return nil, err
		}
		n := 0
		for rows.Next() {
			var r pruneRoot
			var ended any
			if err := rows.Scan(&r.rowid, &ended); err != nil {
				rows.Close()
				return nil, err
			}
			r.state, r.ended = cur.state, ended
			out = append(out, r)
			n++
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if n < limit {
			cur = pruneCursor{state: cur.state + 1}
		}
	}
	return out, nil
}

// readPrunableTree reads the tree under the root at rowid and reports
// whether every task in it may be pruned, with the ids to remove. Every
// row read is checked against the row rules (a damaged one is
// StateConflict); reading stops at the first task that keeps the tree.
func readPrunableTree(t *txn, rowid int64, cutoff float64) ([]string, bool, error) {
	rows, err := t.QueryContext(t.ctx, pruneTreeSQL, rowid)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		task, err := scanTask(rows)
		if err != nil {
			return nil, false, err
		}
		if !prunable(task, cutoff) {
			return nil, false, rows.Close()
		}
		ids = append(ids, task.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	return ids, len(ids) > 0, nil
}

// prunable is the per-task rule: terminal, delivery settled, ended before
// the cutoff. A task without ended_at (not terminal) never is.
func prunable(task Task, cutoff float64) bool {
	switch task.Status {
	case StatusSucceeded, StatusFailed, StatusTimedOut, StatusCancelled:
	default:
		return false
	}
	switch task.DeliveryStatus {
	case DeliveryDelivered, DeliveryFailed, DeliveryNotApplicable:
	default:
		return false
	}
	return task.EndedAt != nil && *task.EndedAt < cutoff
}

// prunedWrite runs fn in one write transaction with foreign keys off,
// and switches them on again (read back) before it returns. With them on,
// SQLite would look for events naming each removed task by reading the
// whole of task_events, which has no index on task_id, once per task;
// the batch keeps the keys itself instead (run removes whole trees and
// all their events, and checks that no task names a removed parent). The
// pragma cannot change inside a transaction, so it brackets it. A ledger
// whose keys cannot be switched on again is closed.
func (l *Ledger) prunedWrite(ctx context.Context, fn func(*txn) error) error {
	return l.underWriteLock(func() (err error) {
		end := context.WithoutCancel(ctx)
		if _, err := l.conn.ExecContext(end, "PRAGMA foreign_keys = OFF"); err != nil {
			return classifySQLite("prune", err)
		}
		defer func() {
			_, rerr := l.conn.ExecContext(end, "PRAGMA foreign_keys = ON")
			on, verr := l.pragmaInt("PRAGMA foreign_keys")
			if rerr != nil || verr != nil || on != 1 {
				l.closed = true
				l.shutdown()
				if err == nil {
					err = internal("restore foreign_keys", errOrMismatch(rerr))
				}
			}
		}()
		return l.write(ctx, fn)
	})
}
