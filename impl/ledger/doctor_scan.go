package ledger

import (
	"cmp"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
)

// The doctor reads each table once, in storage order, and keeps per task
// only what its checks still need later, so its memory stays flat as the
// ledger grows (contract §8.7):
//
//  1. The events stream by in sequence order. SQLite finds each event's
//     task (its "owner") through the primary-key index, and the doctor
//     folds the event into a 64-bit digest of that task's event chain,
//     held in an array indexed by rowid (8 bytes per task).
//  2. The tasks stream by in rowid order, each joined to its parent's
//     created_at. Each row's value and time checks run as it passes; the
//     digest of the chain the row implies is computed the same way and
//     compared with the stored one.
//  3. Parent cycles are counted over the (child, parent) rowid pairs of
//     the tasks that have a parent, which SQLite lists through the parent
//     index.
//
// The digests are keyed with a seed drawn afresh for each doctor run
// (hash/maphash), so a file cannot be crafted to make a broken chain
// digest like the chain its row implies; two different chains share a
// digest with probability 2^-64.

// chainDigests maps a task's rowid to the digest of the events seen for
// it so far (0: none yet). Rowids of a ledger are dense (1..n), so an
// array serves; a file with far-apart rowids (only a damaged or crafted
// one) falls back to a map.
type chainDigests struct {
	base   int64
	dense  []uint64
	sparse map[int64]uint64
	seed   maphash.Seed
	buf    []byte
}

func newChainDigests(count, minRowid, maxRowid int64) *chainDigests {
	d := &chainDigests{base: minRowid}
	d.seed = maphash.MakeSeed()
	if span := maxRowid - minRowid + 1; count > 0 && span > 0 && span <= 2*count+1024 {
		d.dense = make([]uint64, span)
	} else {
		d.sparse = map[int64]uint64{}
	}
	return d
}

func (d *chainDigests) get(rowid int64) uint64 {
	if d.dense != nil {
		if i := rowid - d.base; i >= 0 && i < int64(len(d.dense)) {
			return d.dense[i]
		}
		return 0
	}
	return d.sparse[rowid]
}

func (d *chainDigests) set(rowid int64, v uint64) {
	if d.dense != nil {
		if i := rowid - d.base; i >= 0 && i < int64(len(d.dense)) {
			d.dense[i] = v
		}
		return
	}
	d.sparse[rowid] = v
}

// fold extends digest prev by the event encoded in d.buf: the event's
// keyed hash is mixed into the digest by an order-sensitive step (a
// multiply by an odd constant after the add), so a chain's digest depends
// on its events and their order.
func (d *chainDigests) fold(prev uint64) uint64 {
	return (prev + maphash.Bytes(d.seed, d.buf)) * 0x9e3779b97f4a7c15
}

// encodeEvent encodes one chain event into d.buf: the five compared
// values, strings length-prefixed, the time as its float64 bits with -0
// read as 0 (the comparison is ==). A nullable text is "" for NULL, as
// in optText.
func (d *chainDigests) encodeEvent(kind, from, to, code string, at float64) {
	b := append(d.buf[:0], 1)
	for _, s := range [...]string{kind, from, to, code} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	if at == 0 {
		at = 0
	}
	d.buf = binary.LittleEndian.AppendUint64(b, math.Float64bits(at))
}

// encodeStoredEvent encodes an event row (task_id, event_kind, from_value,
// to_value, code, occurred_at) as the chain check reads it: an id that is
// not a driver string or a value of the wrong type makes the event one
// that no chain expects (a lone 0 byte).
func (d *chainDigests) encodeStoredEvent(row []driver.Value) {
	_, idText := row[0].(string)
	kind, kindOK := row[1].(string)
	from, fromOK := optText(row[2])
	to, toOK := row[3].(string)
	code, codeOK := optText(row[4])
	at, atOK := asTime(row[5])
	if !(idText && kindOK && fromOK && toOK && codeOK && atOK) {
		d.buf = append(d.buf[:0], 0)
		return
	}
	d.encodeEvent(kind, from, to, code, at)
}

// expectedDigest is the digest of the chain a task row implies (contract
// §8.4): created, then started if it started, then the terminal
// transition with the task's code at ended_at, then the delivery
// transition with the delivery code at delivery_updated_at. ok is false
// when a time the chain needs is not a finite number: no stored chain can
// match then.
func (d *chainDigests) expectedDigest(row *doctorTask) (digest uint64, ok bool) {
	status, _ := asText(row.status)
	delivery, _ := asText(row.delivery)
	tcode, _ := asText(row.tcode)
	dcode, _ := asText(row.dcode)
	step := func(kind, from, to, code string, at any) bool {
		t, ok := asTime(at)
		if ok {
			d.encodeEvent(kind, from, to, code, t)
			digest = d.fold(digest)
		}
		return ok
	}
	if !step(eventCreated, "", StatusQueued, codeCreated, row.created) {
		return 0, false
	}
	started := row.started != nil
	if started && !step(eventTaskTransition, StatusQueued, StatusRunning, codeStarted, row.started) {
		return 0, false
	}
	if isTerminal(status) {
		from := StatusQueued
		if started {
			from = StatusRunning
		}
		if !step(eventTaskTransition, from, status, tcode, row.ended) {
			return 0, false
		}
	}
	if delivery != DeliveryPending && !step(eventDeliveryTransition, DeliveryPending, delivery, dcode, row.dup) {
		return 0, false
	}
	return digest, true
}

// ownerKeySQL is the text an event's task_id or a task's id is looked up
// by: a TEXT or BLOB value's bytes, and for anything else the empty text
// (the key asText gives them). The owner of a key is the task row with
// the largest rowid whose id has those bytes, TEXT or BLOB.
func ownerKeySQL(col string) string {
	return `CASE WHEN typeof(` + col + `) IN ('text','blob') THEN ` + col + ` ELSE '' END`
}

func ownerSQL(col string) string {
	k := ownerKeySQL(col)
	return `(SELECT max(o.rowid) FROM tasks o WHERE o.id IN (CAST(` + k + ` AS TEXT), CAST(` + k + ` AS BLOB)))`
}

// When every task id is TEXT (always so in a ledger this package wrote),
// the owner of an event is the one row whose id is its task_id's bytes as
// TEXT, a single index probe, and each task owns its own chain.
var (
	eventsByTextIDSQL = `SELECT e.task_id, e.event_kind, e.from_value, e.to_value, e.code, e.occurred_at, o.rowid
		FROM task_events e LEFT JOIN tasks o ON o.id = CAST(` + ownerKeySQL("e.task_id") + ` AS TEXT) ORDER BY e.sequence`
	eventsByAnyIDSQL = `SELECT e.task_id, e.event_kind, e.from_value, e.to_value, e.code, e.occurred_at, ` + ownerSQL("e.task_id") + `
		FROM task_events e ORDER BY e.sequence`
)

// doctorTasksSQL lists every task row with its parent's created_at and
// rowid (NULL when parent_id is not TEXT or names no TEXT id), and, when
// ids of other types exist, the row that owns its chain.
func doctorTasksSQL(anyIDs bool) string {
	owner := "t.rowid"
	if anyIDs {
		owner = ownerSQL("t.id")
	}
	return `SELECT t.rowid, t.id, t.parent_id, t.status, t.delivery_status, t.delivery_required, t.payload_hash,
		t.timeout_seconds, t.created_at, t.started_at, t.updated_at, t.ended_at, t.deadline_at, t.delivery_updated_at,
		t.terminal_code, t.delivery_code, t.version, p.created_at, p.rowid, ` + owner + `
		FROM tasks t LEFT JOIN tasks p ON typeof(t.parent_id) = 'text' AND p.id = t.parent_id ORDER BY t.rowid`
}

// parentEdgesSQL lists, for each task with a TEXT id whose parent_id (TEXT
// or BLOB) has the bytes of a TEXT id, the rowids of the task and of that
// parent: the edges the cycle count walks. Every TEXT and BLOB value is
// at least the empty TEXT (NULL and numbers sort before TEXT), a range the
// parent index serves, so a ledger with few children is not read in full
// again.
const parentEdgesSQL = `SELECT t.rowid, p.rowid FROM tasks t JOIN tasks p ON p.id = CAST(t.parent_id AS TEXT)
	WHERE t.parent_id >= '' AND typeof(t.id) = 'text' AND typeof(t.parent_id) IN ('text','blob')`

// taskShapeSQL reads, through indexes only, the number of tasks, the
// rowid range and whether any id is not TEXT (NULL sorts first in the id
// index, numbers before TEXT, BLOB after it).
const taskShapeSQL = `SELECT (SELECT count(*) FROM tasks), ifnull((SELECT min(rowid) FROM tasks), 0),
	ifnull((SELECT max(rowid) FROM tasks), 0), EXISTS (SELECT 1 FROM tasks WHERE id IS NULL),
	typeof((SELECT min(id) FROM tasks)), typeof((SELECT max(id) FROM tasks))`

func runDoctor(t *txn) DoctorReport {
	rep := newDoctorReport()
	st, err := readSchema(t.ctx, t)
	if !quickCheck(t, err == nil && st.okV2()) {
		rep.QuickCheck = "failed"
	}
	if err != nil || !st.okV2() {
		rep.SchemaVersion = st.version
		rep.DoctorErrorCount = 1
		return rep
	}
	rep.SchemaVersion = 2
	rep.SchemaOK = true

	fk, ferr := countRows(t, "PRAGMA foreign_key_check")
	rep.ForeignKeyErrorCount = fk

	var count, minRowid, maxRowid int64
	var nullID bool
	var minType, maxType string
	terr := t.l.conn.QueryRowContext(t.ctx, taskShapeSQL).Scan(&count, &minRowid, &maxRowid, &nullID, &minType, &maxType)
	anyIDs := nullID || (minType != "text" && minType != "null") || (maxType != "text" && maxType != "null")
	digests := newChainDigests(count, minRowid, maxRowid)

	eerr := streamEvents(t, digests, anyIDs, &rep)
	if err := checkTasks(t, digests, anyIDs, &rep); err != nil {
		terr = err
	}
	digests = nil
	cycles, err := countCycles(t)
	if err != nil {
		terr = err
	}
	rep.ParentCycleCount = cycles
	for _, e := range []error{terr, ferr, eerr} {
		if e != nil {
			rep.DoctorErrorCount++
		}
	}

	rep.Healthy = rep.QuickCheck == "ok" && rep.SchemaOK && rep.OrphanCount == 0 && rep.ParentCycleCount == 0 &&
		rep.ForeignKeyErrorCount == 0 && rep.StateInconsistencyCount == 0 && rep.TimestampInconsistencyCount == 0 &&
		rep.EventInconsistencyCount == 0 && rep.DoctorErrorCount == 0
	return rep
}

// streamEvents counts the events and folds each into its owner's digest.
// Events whose task_id has no owner add 1 to the event inconsistencies
// per distinct id (only a damaged file has any, so the set stays small).
func streamEvents(t *txn, digests *chainDigests, anyIDs bool, rep *DoctorReport) error {
	query := eventsByTextIDSQL
	if anyIDs {
		query = eventsByAnyIDSQL
	}
	unknown := map[string]bool{}
	return rawQuery(t, query, 7, func(row []driver.Value) error {
		rep.EventCount++
		owner, ok := row[6].(int64)
		if !ok {
			if key := fmt.Sprint(row[0]); !unknown[key] {
				unknown[key] = true
				rep.EventInconsistencyCount++
			}
			return nil
		}
		digests.encodeStoredEvent(row)
		digests.set(owner, digests.fold(digests.get(owner)))
		return nil
	})
}

// checkTasks streams the task rows: the state counts, each row's value
// and time checks, orphans, and whether the chain its owner holds is the
// one the owner's row implies. A row whose chain another row owns (only
// when ids of other types exist) takes that row's verdict, looked up
// after the pass.
func checkTasks(t *txn, digests *chainDigests, anyIDs bool, rep *DoctorReport) error {
	var broken map[int64]bool // owner rowid -> its chain is broken (anyIDs only)
	var deferred []int64      // owners of rows that do not own their chain
	if anyIDs {
		broken = map[int64]bool{}
	}
	var d doctorTask
	err := rawQuery(t, doctorTasksSQL(anyIDs), 20, func(r []driver.Value) error {
		rep.TaskCount++
		rowid, _ := r[0].(int64)
		d = doctorTask{
			id: r[1], parent: r[2], status: r[3], delivery: r[4], required: r[5], hash: r[6],
			timeout: r[7], created: r[8], started: r[9], updated: r[10], ended: r[11], deadline: r[12], dup: r[13],
			tcode: r[14], dcode: r[15], version: r[16],
		}
		if s, ok := d.status.(string); ok {
			if _, known := rep.TaskStatusCounts[s]; known {
				rep.TaskStatusCounts[s]++
			}
		}
		if s, ok := d.delivery.(string); ok {
			if _, known := rep.DeliveryStatusCounts[s]; known {
				rep.DeliveryStatusCounts[s]++
			}
		}
		if !taskStateOK(&d) {
			rep.StateInconsistencyCount++
		}
		timesOK := taskTimesOK(&d)
		switch d.parent.(type) {
		case nil:
		case string:
			if r[18] == nil {
				rep.OrphanCount++
			} else if created, ok := asTime(d.created); timesOK && ok {
				if pc, pok := asTime(r[17]); pok && created < pc {
					timesOK = false // a child created before its parent
				}
			}
		default:
			rep.OrphanCount++
		}
		if !timesOK {
			rep.TimestampInconsistencyCount++
		}
		want, ok := digests.expectedDigest(&d)
		chainOK := ok && want == digests.get(rowid)
		switch owner, hasOwner := r[19].(int64); {
		case !anyIDs || (hasOwner && owner == rowid):
			if !chainOK {
				rep.EventInconsistencyCount++
			}
			if anyIDs && !chainOK {
				broken[rowid] = true
			}
		case !hasOwner:
			rep.EventInconsistencyCount++
		default:
			deferred = append(deferred, owner)
		}
		return nil
	})
	for _, owner := range deferred {
		if broken[owner] {
			rep.EventInconsistencyCount++
		}
	}
	return err
}

// parentEdge is a task and its parent, by rowid.
type parentEdge struct{ child, parent int64 }

// countCycles counts the cycles of the parent relation, each once. Every
// task has at most one parent, so walking up from each task not yet seen
// either ends (at a root, or a task seen before) or meets the walk's own
// path, which closes a cycle that no earlier walk reached.
func countCycles(t *txn) (int, error) {
	var edges []parentEdge
	err := rawQuery(t, parentEdgesSQL, 2, func(r []driver.Value) error {
		child, _ := r[0].(int64)
		parent, _ := r[1].(int64)
		edges = append(edges, parentEdge{child, parent})
		return nil
	})
	slices.SortFunc(edges, func(a, b parentEdge) int { return cmp.Compare(a.child, b.child) })
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(edges))
	var path []int
	cycles := 0
	for start := range edges {
		path = path[:0]
		for cur := start; ; {
			if state[cur] == onPath {
				cycles++
				break
			}
			if state[cur] == done {
				break
			}
			state[cur] = onPath
			path = append(path, cur)
			next, ok := slices.BinarySearchFunc(edges, edges[cur].parent, func(e parentEdge, rowid int64) int {
				return cmp.Compare(e.child, rowid)
			})
			if !ok {
				break // the parent has no parent: a root
			}
			cur = next
		}
		for _, n := range path {
			state[n] = done
		}
	}
	return cycles, err
}
