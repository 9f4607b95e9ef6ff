package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
	"math"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
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
	// EndedBefore is the cutoff: a tree is removed only when every task
	// in it ended strictly before it (compared as the float nearest to
	// it, the stored form). It is required: the zero Time is
	// ErrInvalidInput.
	EndedBefore time.Time
	// DryRun reports what the prune would remove and writes nothing; it
	// works on a read-only ledger.
	DryRun bool

	// endedBeforeSeconds is the cutoff in the stored form, set by
	// SetEndedBeforeSeconds; it takes the place of EndedBefore.
	endedBeforeSeconds *float64
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
	SELECT tasks.rowid, ` + taskColumns + ` FROM tree CROSS JOIN tasks USING (id)`

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
	var cutoff float64
	switch {
	case opts.endedBeforeSeconds != nil:
		cutoff = *opts.endedBeforeSeconds
	case opts.EndedBefore.IsZero():
		return PruneReport{}, invalidInput("prune needs a time the trees ended before")
	default:
		cutoff = floatseconds.UnixSeconds(opts.EndedBefore)
	}
	if math.IsNaN(cutoff) || math.IsInf(cutoff, 0) {
		return PruneReport{}, invalidInput("a time is not a finite number")
	}
	if !opts.DryRun {
		if err := l.refuseMutation(ctx); err != nil {
			return PruneReport{}, err
		}
	}
	if l.server != nil {
		return l.serverPrune(ctx, cutoff, opts.DryRun)
	}
	rep := PruneReport{DryRun: opts.DryRun, Applied: !opts.DryRun}
	var cur pruneCursor
	batch := 0
	for !cur.done {
		// Each round plans the batches ahead in read transactions, beside
		// writers: it judges their trees and then finds all their events
		// in one pass over task_events (which has no index on task_id).
		// A dry run counts what the plan found; an apply writes the
		// batches one by one, each judged again under the write lock.
		plan, err := l.planPrune(ctx, cur, cutoff, opts.DryRun)
		if err != nil {
			if opts.DryRun {
				return PruneReport{}, err
			}
			return rep, err
		}
		for i := range plan.batches {
			pb := &plan.batches[i]
			b := pruneBatch{cursor: pb.end, examined: pb.examined, removed: pb.removed, tasks: pb.tasks, events: pb.events}
			if !opts.DryRun && pb.tasks > 0 {
				err = pruneHook(batch, "read")
				if err == nil {
					err = l.prunedWrite(ctx, func(t *txn) error {
						b = pruneBatch{cursor: pb.start}
						if err := b.apply(t, cutoff, pb, plan.maxSeq); err != nil {
							return err
						}
						return pruneHook(batch, "write")
					})
				}
				if err != nil {
					return rep, err
				}
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
			batch++
			if !sameCursor(cur, pb.end) {
				// The write judged other trees than the plan (a tree
				// changed between them) and stopped elsewhere: the rest of
				// the plan starts at a position the prune is not at.
				break
			}
		}
	}
	return rep, nil
}

// pruneHook runs hooks.pruneBatch when a test set it.
func pruneHook(batch int, phase string) error {
	if hooks.pruneBatch == nil {
		return nil
	}
	return hooks.pruneBatch(batch, phase)
}

// pruneBatch is one batch's work: where it starts and ends, its counts,
// and the tasks it removes.
type pruneBatch struct {
	cursor                           pruneCursor
	examined, removed, tasks, events int
	ids                              []string // the tasks it removes
	rowids                           []int64  // their rowids, in the same order
}

// digest identifies the batch's choice of tasks (ids and rowids, in
// order), so that a write can tell whether it judged what the plan did
// without the plan keeping every id.
func (b *pruneBatch) digest() [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for i, id := range b.ids {
		binary.BigEndian.PutUint64(n[:], uint64(b.rowids[i]))
		h.Write(n[:])
		binary.BigEndian.PutUint64(n[:], uint64(len(id)))
		h.Write(n[:])
		h.Write([]byte(id))
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// apply judges the trees of the next candidates from b.cursor again,
// under the write lock, and removes those that go with all their events.
// When it picked the same tasks from the same position as the plan, it
// removes the events the plan found (by sequence, through the primary
// key) and those appended since (sequences above the plan's largest, a
// range of the primary key); otherwise it finds them itself by reading
// task_events whole. Either way every event of the removed tasks goes: an
// event with a sequence at most the plan's largest was committed before
// the read that saw that largest began (sequences are given out in commit
// order, one writer at a time, never reused), so the plan's pass, which
// read every sequence up to it in ascending order, saw it.
func (b *pruneBatch) apply(t *txn, cutoff float64, plan *plannedBatch, maxSeq int64) error {
	if err := b.judge(t, cutoff); err != nil || len(b.ids) == 0 {
		return err
	}
	list, err := json.Marshal(b.ids)
	if err != nil {
		return internal("prune", err)
	}
	var deletes []prunedDelete
	if sameCursor(b.cursor, plan.end) && b.digest() == plan.digest {
		seqs, err := json.Marshal(plan.sequences())
		if err != nil {
			return internal("prune", err)
		}
		deletes = []prunedDelete{
			{`DELETE FROM task_events WHERE sequence IN (SELECT value FROM json_each(?)) AND task_id IN (SELECT value FROM json_each(?))`, []any{string(seqs), string(list)}},
			{`DELETE FROM task_events WHERE sequence > ? AND task_id IN (SELECT value FROM json_each(?))`, []any{maxSeq, string(list)}},
		}
	} else {
		deletes = []prunedDelete{{`DELETE FROM task_events WHERE task_id IN (SELECT value FROM json_each(?))`, []any{string(list)}}}
	}
	b.events = 0
	for _, del := range deletes {
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

// prunedDelete is one statement of a batch's removal of events.
type prunedDelete struct {
	sql  string
	args []any
}

// judge reads the trees of the next candidates from b.cursor and keeps
// the ids of those that go, moving the cursor past every candidate it
// examined.
func (b *pruneBatch) judge(t *txn, cutoff float64) error {
	maxTasks := t.l.plans.pruneBatch[1]
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
		ids, rowids, ok, err := readPrunableTree(t, root.rowid, cutoff)
		if err != nil {
			return err
		}
		if ok {
			b.removed++
			b.ids = append(b.ids, ids...)
			b.rowids = append(b.rowids, rowids...)
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
	maxRoots := t.l.plans.pruneBatch[0]
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
// whether every task in it may be pruned, with the ids and rowids to
// remove. Every row read is checked against the row rules (a damaged one
// is StateConflict); reading stops at the first task that keeps the tree.
func readPrunableTree(t *txn, rowid int64, cutoff float64) ([]string, []int64, bool, error) {
	rows, err := t.QueryContext(t.ctx, pruneTreeSQL, rowid)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	var ids []string
	var rowids []int64
	for rows.Next() {
		row := rowidThenTask{rows: rows}
		task, err := scanTask(&row)
		if err != nil {
			return nil, nil, false, err
		}
		if !prunable(task, cutoff) {
			return nil, nil, false, rows.Close()
		}
		ids = append(ids, task.ID)
		rowids = append(rowids, row.rowid)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	return ids, rowids, len(ids) > 0, nil
}

// rowidThenTask scans a row of pruneTreeSQL: the rowid, then the task's
// columns for scanTask.
type rowidThenTask struct {
	rows  rowScanner
	rowid int64
}

func (r *rowidThenTask) Scan(dest ...any) error {
	return r.rows.Scan(append([]any{&r.rowid}, dest...)...)
}

// prunable is the per-task rule: terminal, delivery settled, ended before
// the cutoff. A task without ended_at (not terminal) never is.
func prunable(task taskRow, cutoff float64) bool {
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
	return l.underWriteLock(ctx, func() (err error) {
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
