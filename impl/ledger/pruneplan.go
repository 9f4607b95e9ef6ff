package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
)

// A prune plans its batches ahead of writing them. The schema has no
// index on task_events.task_id (it is fixed, and a prune adds no object,
// not even a temporary one), so the only way to a task's events is a pass
// over the whole table; finding each batch's events with its own pass
// made a prune cost the number of batches times the table. A plan judges
// many batches' trees first and then finds the events of all of them in
// one pass, in ascending sequence order, each event's task looked up
// through the tasks' primary key and routed to its batch by rowid.
//
// The plan keeps, per task, two bytes of its batch number (in pages of
// rowids) and, per batch, its counts, positions, a digest of its tasks
// and its events' sequences delta-coded (about a byte each where they are
// near one another). It stops growing at pruneWindowTasks tasks, at
// pruneWindowBatches batches, or when its sequences take
// pruneWindowBytes: memory stays bounded whatever the ledger's size, and
// a ledger that removes more than a window's worth pays one more pass per
// window.
const (
	pruneWindowTasks   = 1 << 20
	pruneWindowBatches = 1<<16 - 1
	pruneWindowBytes   = 8 << 20
	// pruneEventChunk is how many events one read transaction of the
	// pass reads: the pass leaves the ledger's lock to other callers
	// between chunks.
	pruneEventChunk = 1 << 14
)

// prunePlan is the batches a prune plans from one position.
type prunePlan struct {
	batches []plannedBatch
	owner   rowidOwners
	maxSeq  int64 // every event up to this sequence was read by the pass
}

// plannedBatch is one batch as the plan judged it.
type plannedBatch struct {
	start, end                       pruneCursor
	examined, removed, tasks, events int
	digest                           [sha256.Size]byte
	seqs                             []byte // its events' sequences, ascending, as uvarint deltas
	lastSeq                          int64
}

// sequences decodes the batch's event sequences.
func (pb *plannedBatch) sequences() []int64 {
	out := make([]int64, 0, pb.events)
	var seq int64
	for buf := pb.seqs; len(buf) > 0; {
		d, n := binary.Uvarint(buf)
		if n <= 0 {
			break
		}
		seq += int64(d)
		out = append(out, seq)
		buf = buf[n:]
	}
	return out
}

// rowidOwners maps a task's rowid to its batch in the plan (index + 1; 0
// for none), in pages of 4,096 rowids, two bytes each.
type rowidOwners struct {
	pages map[int64]*[4096]uint16
}

func (o *rowidOwners) get(rowid int64) uint16 {
	if p := o.pages[rowid>>12]; p != nil {
		return p[rowid&4095]
	}
	return 0
}

func (o *rowidOwners) set(rowid int64, owner uint16) {
	if o.pages == nil {
		o.pages = map[int64]*[4096]uint16{}
	}
	p := o.pages[rowid>>12]
	if p == nil {
		p = new([4096]uint16)
		o.pages[rowid>>12] = p
	}
	p[rowid&4095] = owner
}

// windowBound is a test's bound when it set one, else the default.
func windowBound(test, bound int) int {
	if test > 0 {
		return test
	}
	return bound
}

// planPrune judges the batches from cur on, each in its own read
// transaction, until the window is full or the candidates end, and then
// finds their events (for a dry run, counts them). A batch whose tasks a
// batch before it already holds (possible only when the ledger changed
// between the two reads) ends the plan before it.
func (l *Ledger) planPrune(ctx context.Context, cur pruneCursor, cutoff float64, dryRun bool) (*prunePlan, error) {
	p := &prunePlan{}
	maxTasks, maxBatches := windowBound(l.plans.pruneWindow[0], pruneWindowTasks), windowBound(l.plans.pruneWindow[1], pruneWindowBatches)
	tasks := 0
	for !cur.done && tasks < maxTasks && len(p.batches) < maxBatches {
		var b pruneBatch
		err := l.lockedReadTx(ctx, "prune", true, func(t *txn) error {
			b = pruneBatch{cursor: cur} // a read-only read may be retried
			return b.judge(t, cutoff)
		})
		if err != nil {
			return nil, err
		}
		owner := uint16(len(p.batches) + 1)
		clash := false
		for _, r := range b.rowids {
			if p.owner.get(r) != 0 {
				clash = true
				break
			}
		}
		if clash {
			break
		}
		for _, r := range b.rowids {
			p.owner.set(r, owner)
		}
		p.batches = append(p.batches, plannedBatch{start: cur, end: b.cursor, examined: b.examined,
			removed: b.removed, tasks: b.tasks, digest: b.digest()})
		tasks += b.tasks
		cur = b.cursor
	}
	if tasks == 0 {
		return p, nil
	}
	return p, l.findPlannedEvents(ctx, p, dryRun)
}

// findPlannedEvents reads task_events once, in ascending sequence order
// and in chunks of pruneEventChunk, each chunk its own read transaction,
// and gives each event of a planned task to its batch. An event
// committed after a chunk's read began has a larger sequence than any
// that chunk saw, so a later chunk reads it; the last chunk reads to the
// end of the table, and the plan's maxSeq is the largest sequence its
// read could see. When the sequences outgrow pruneWindowBytes, the plan
// gives up its last batches (never its first) and ends before them.
func (l *Ledger) findPlannedEvents(ctx context.Context, p *prunePlan, dryRun bool) error {
	type found struct {
		owner uint16
		seq   int64
	}
	var chunk []found
	maxBytes := windowBound(l.plans.pruneWindow[2], pruneWindowBytes)
	active := len(p.batches) // batches at and past this index were given up
	bytes := 0
	var after int64
	for {
		var read int
		var last, maxSeq int64
		err := l.lockedReadTx(ctx, "prune", true, func(t *txn) error {
			chunk, read, last = chunk[:0], 0, after // a read-only read may be retried
			if err := t.QueryRowContext(t.ctx, `SELECT ifnull(max(sequence), 0) FROM task_events`).Scan(&maxSeq); err != nil {
				return err
			}
			rows, err := t.QueryContext(t.ctx, pruneEventsSQL, after, pruneEventChunk)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var seq, rowid int64
				if err := rows.Scan(&seq, &rowid); err != nil {
					return err
				}
				read++
				last = seq
				if owner := p.owner.get(rowid); owner != 0 {
					chunk = append(chunk, found{owner, seq})
				}
			}
			return rows.Err()
		})
		if err != nil {
			return err
		}
		for _, f := range chunk {
			i := int(f.owner) - 1
			if i >= active {
				continue
			}
			pb := &p.batches[i]
			pb.events++
			if dryRun {
				continue
			}
			before := len(pb.seqs)
			pb.seqs = binary.AppendUvarint(pb.seqs, uint64(f.seq-pb.lastSeq))
			pb.lastSeq = f.seq
			bytes += len(pb.seqs) - before
			for bytes > maxBytes && active > 1 {
				active--
				bytes -= len(p.batches[active].seqs)
				p.batches[active].seqs = nil
			}
		}
		after = last
		if read < pruneEventChunk {
			p.maxSeq = maxSeq
			break
		}
	}
	p.batches = p.batches[:active]
	return nil
}

// pruneEventsSQL reads the next events after a sequence with their
// task's rowid (an event naming no task, only in a damaged file, is left
// out). CROSS JOIN keeps task_events the outer loop, read along its
// primary key, and each task is found through its primary key's index.
const pruneEventsSQL = `SELECT e.sequence, t.rowid FROM task_events AS e CROSS JOIN tasks AS t ON t.id = e.task_id
	WHERE e.sequence > ? ORDER BY e.sequence LIMIT ?`
