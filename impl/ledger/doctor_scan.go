package ledger

import (
	"cmp"
	"database/sql/driver"
	"fmt"
	"slices"
)

// The doctor reads each table once, in storage order, and keeps per task
// only what its checks still need later, one byte, so its memory stays
// flat as the ledger grows (spec/task-state-guard.md §8.7):
//
//  1. The events stream by in sequence order. SQLite finds each event's
//     task (its "owner") through the primary-key index, reads the owner's
//     row, and says which position of the owner's chain (spec/task-state-guard.md §8.4)
//     the event is, value for value, or that it is none. Go checks that
//     each owner's events arrive at positions 0, 1, 2, ... in order,
//     holding per task the next position and a broken flag in one byte of
//     an array indexed by rowid.
//  2. The tasks stream by in rowid order, each joined to its parent's
//     created_at. Each row's value and time checks run as it passes, and
//     its chain is consistent when it was never broken and reached the
//     length the row implies.
//  3. Parent cycles are counted over the (child, parent) rowid pairs of
//     the tasks that have a parent, which SQLite lists through the parent
//     index.

// chainStates maps a task's rowid to the state of its chain: the next
// position expected (low bits) and chainBroken. Rowids of a ledger are
// dense (1..n) until a prune removes trees, which leaves holes: an array
// over the rowid range serves while it costs at most 16 bytes a task
// (less than a map entry); a file with rowids farther apart (a prune
// that kept one task in twenty, or a damaged or crafted file) falls back
// to a map.
type chainStates struct {
	base   int64
	dense  []uint8
	sparse map[int64]uint8
}

// chainBroken marks a chain that met an event out of place.
const chainBroken = 0x80

func newChainStates(count, minRowid, maxRowid int64) *chainStates {
	c := &chainStates{base: minRowid}
	if span := maxRowid - minRowid + 1; count > 0 && span > 0 && span <= 16*count+1024 {
		c.dense = make([]uint8, span)
	} else {
		c.sparse = map[int64]uint8{}
	}
	return c
}

func (c *chainStates) get(rowid int64) uint8 {
	if c.dense != nil {
		if i := rowid - c.base; i >= 0 && i < int64(len(c.dense)) {
			return c.dense[i]
		}
		return 0
	}
	return c.sparse[rowid]
}

func (c *chainStates) set(rowid int64, v uint8) {
	if c.dense != nil {
		if i := rowid - c.base; i >= 0 && i < int64(len(c.dense)) {
			c.dense[i] = v
		}
		return
	}
	c.sparse[rowid] = v
}

// advance records an event at position pos (-1: at none) of the owner's
// chain: the chain stays intact only while each event is the next one.
func (c *chainStates) advance(owner, pos int64) {
	st := c.get(owner)
	switch {
	case st&chainBroken != 0:
	case pos != int64(st):
		c.set(owner, st|chainBroken)
	default:
		c.set(owner, st+1)
	}
}

// intact reports whether rowid's chain holds exactly its length events,
// each in place.
func (c *chainStates) intact(rowid int64, length int) bool {
	return c.get(rowid) == uint8(length)
}

// chainLength is the number of events a task row implies (spec/task-state-guard.md §8.4):
// created, then started if it started, then the terminal transition,
// then the delivery transition once the delivery closed.
func chainLength(d *doctorTask) int {
	status, _ := asText(d.status)
	delivery, _ := asText(d.delivery)
	n := 1
	if d.started != nil {
		n++
	}
	if isTerminal(status) {
		n++
	}
	if delivery != string(DeliveryPending) {
		n++
	}
	return n
}

// textSQL is a column as asText reads it, "" for a value that is not TEXT
// or BLOB (SQLite compares a BLOB cast to TEXT byte for byte). TEXT sorts
// after every number and before every BLOB, and a comparison with a BLOB
// literal converts nothing, so two comparisons (cheaper per row than a
// typeof call) tell the types apart.
func textSQL(col string) string {
	return `(CASE WHEN ` + col + ` >= X'' THEN CAST(` + col + ` AS TEXT) WHEN ` + col + ` >= '' THEN ` + col + ` ELSE '' END)`
}

// codeSQL is a row's code as an event's code must equal it (with IS):
// NULL for NULL, a TEXT or BLOB value's text, and NULL for a number,
// which no valid row holds. An empty text is not NULL: the row and the
// event must hold the same value, as model/ledger's Checker compares.
func codeSQL(col string) string {
	return `(CASE WHEN ` + col + ` >= X'' THEN CAST(` + col + ` AS TEXT) WHEN ` + col + ` >= '' THEN ` + col + ` END)`
}

// eventPositionSQL is the position in its owner o's chain that event e
// is, comparing every value as the chain check does (-1: none). An event
// is readable when its task_id, kind and to_value are TEXT, its
// from_value NULL or TEXT, its code NULL or TEXT equal to the row's
// (codeSQL) and its time a number; no two positions accept the same
// event. A time compares equal to the row's only when the row's is a
// number too.
//
// Only the task_id and the time are tested up front: each branch
// compares the kind, from_value, to_value and code with TEXT (a literal,
// or a value textSQL or codeSQL made TEXT) or NULL, which a stored value
// of another type never equals, so a branch that matches has already
// shown them TEXT.
var eventPositionSQL = func() string {
	status, delivery := textSQL("o.status"), textSQL("o.delivery_status")
	started := `(o.started_at IS NOT NULL)`
	terminal := status + ` IN ('succeeded','failed','timed_out','cancelled')`
	// Any number, infinities included: an infinite time equal to the
	// row's matches it (the row's own time check counts it), as in
	// model/ledger's Checker. TEXT sorts above every number, NULL fails.
	readable := `e.task_id >= '' AND e.task_id < X'' AND e.occurred_at >= -9e999 AND e.occurred_at <= 9e999`
	// Each branch tests the event's own values first, so the row's
	// values are only decoded for the branch the event can be.
	return `CASE WHEN o.rowid IS NOT NULL AND ` + readable + ` THEN (CASE
	WHEN e.event_kind = '` + eventCreated + `' AND e.from_value IS NULL AND e.to_value = '` + string(StatusQueued) + `'
		AND e.code = '` + codeCreated + `' AND e.occurred_at = o.created_at THEN 0
	WHEN e.event_kind = '` + eventTaskTransition + `' AND e.from_value = '` + string(StatusQueued) + `'
		AND e.to_value = '` + string(StatusRunning) + `' AND e.code = '` + codeStarted + `' AND ` + started + `
		AND e.occurred_at = o.started_at THEN 1
	WHEN e.event_kind = '` + eventTaskTransition + `'
		AND e.from_value = (CASE WHEN ` + started + ` THEN '` + string(StatusRunning) + `' ELSE '` + string(StatusQueued) + `' END)
		AND e.occurred_at = o.ended_at AND e.to_value = ` + status + ` AND ` + terminal + `
		AND e.code IS ` + codeSQL("o.terminal_code") + ` THEN 1 + ` + started + `
	WHEN e.event_kind = '` + eventDeliveryTransition + `' AND e.from_value = '` + string(DeliveryPending) + `'
		AND e.occurred_at = o.delivery_updated_at AND e.to_value = ` + delivery + ` AND ` + delivery + ` <> '` + string(DeliveryPending) + `'
		AND e.code IS ` + codeSQL("o.delivery_code") + ` THEN 1 + ` + started + ` + (` + terminal + `)
	ELSE -1 END) ELSE -1 END`
}()

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
// TEXT, a single index probe, and each task owns its own chain. Each
// event row is (owner rowid, task_id when there is no owner or it is not
// TEXT, position).
var (
	eventsByTextIDSQL = `SELECT o.rowid, ` + eventTaskIDSQL + `, ` + eventPositionSQL + `
		FROM task_events e LEFT JOIN tasks o ON o.id = CAST(` + ownerKeySQL("e.task_id") + ` AS TEXT) ORDER BY e.sequence`
	eventsByAnyIDSQL = `SELECT o.rowid, ` + eventTaskIDSQL + `, ` + eventPositionSQL + `
		FROM task_events e LEFT JOIN tasks o ON o.rowid = ` + ownerSQL("e.task_id") + ` ORDER BY e.sequence`
)

// eventTaskIDSQL is an event's task_id when it has no owner (the unknown
// ids are counted by value) or is not TEXT (which decides whether the
// events' foreign keys can be counted from the stream; see eventKeys).
const eventTaskIDSQL = `CASE WHEN o.rowid IS NULL OR NOT (e.task_id >= '' AND e.task_id < X'') THEN e.task_id END`

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

// runDoctor is the doctor of section 8 on the schema t's file holds.
func runDoctor(t *txn) DoctorReport {
	st, err := readSchema(t.ctx, t)
	return doctorOn(t, st, err)
}

// doctorOn is the doctor's report when the schema is st (or could not be
// read: err): the early report unless st is exactly v2.
func doctorOn(t *txn, st schemaStatus, err error) DoctorReport {
	return doctorChecked(t, st, err, quickCheck(t, err == nil && st.okV2()))
}

// doctorChecked is doctorOn after the quick check of the same read
// transaction answered pagesOK, for a caller that ran it itself (a
// restore's check of its copy): it reads every page, so it runs once.
func doctorChecked(t *txn, st schemaStatus, err error, pagesOK bool) DoctorReport {
	rep := newDoctorReport()
	rep.QuickCheckOK = pagesOK
	if err != nil || !st.okV2() {
		rep.SchemaVersion = st.version
		rep.DoctorErrorCount = 1
		return rep
	}
	rep.SchemaVersion = 2
	rep.SchemaOK = true

	var count, minRowid, maxRowid int64
	var nullID bool
	var minType, maxType string
	terr := faultIn(taskShapeSQL)
	if terr == nil {
		terr = t.l.conn.QueryRowContext(t.ctx, taskShapeSQL).Scan(&count, &minRowid, &maxRowid, &nullID, &minType, &maxType)
	}
	anyIDs := nullID || (minType != "text" && minType != "null") || (maxType != "text" && maxType != "null")
	chains := newChainStates(count, minRowid, maxRowid)
	var keys eventKeys
	eerr := streamEvents(t, chains, anyIDs, &rep, &keys)
	fk, ferr := countForeignKeyErrors(t, anyIDs || eerr != nil || !keys.exact, keys.missing)
	rep.ForeignKeyErrorCount = fk
	if err := checkTasks(t, chains, anyIDs, &rep); err != nil {
		terr = err
	}
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

	rep.Healthy = rep.QuickCheckOK && rep.SchemaOK && rep.OrphanCount == 0 && rep.ParentCycleCount == 0 &&
		rep.ForeignKeyErrorCount == 0 && rep.StateInconsistencyCount == 0 && rep.TimestampInconsistencyCount == 0 &&
		rep.EventInconsistencyCount == 0 && rep.DoctorErrorCount == 0
	return rep
}

// eventKeys is what the event stream tells about the events' foreign key
// (task_events.task_id to tasks.id), when every task id is TEXT: an event
// violates it exactly when its task_id is not NULL and no task's id
// equals it, SQLite's foreign_key_check applying TEXT affinity to the
// task_id first. For a TEXT task_id that is "it has no owner" (the
// stream's join compares the same bytes the same way), and a BLOB
// task_id without an owner matches no TEXT id either. An event whose
// task_id is a number (which TEXT affinity turns into text) or not TEXT
// but has an owner (the join casts it; the foreign key does not) makes
// the count inexact, and the PRAGMA then counts as before.
type eventKeys struct {
	missing int  // events whose foreign key fails
	exact   bool // missing is foreign_key_check's count for task_events
}

// countForeignKeyErrors is PRAGMA foreign_key_check's row count: in full
// when asked, else for tasks alone plus the events' count from the
// stream, which spares the PRAGMA a second index probe per event.
func countForeignKeyErrors(t *txn, full bool, eventsMissing int) (int, error) {
	if full {
		return countRows(t, "PRAGMA foreign_key_check")
	}
	n, err := countRows(t, "PRAGMA foreign_key_check(tasks)")
	return n + eventsMissing, err
}

// streamEvents counts the events and advances each owner's chain.
// Events whose task_id has no owner add 1 to the event inconsistencies
// per distinct id (only a damaged file has any, so the set stays small).
func streamEvents(t *txn, chains *chainStates, anyIDs bool, rep *DoctorReport, keys *eventKeys) error {
	query := eventsByTextIDSQL
	if anyIDs {
		query = eventsByAnyIDSQL
	}
	keys.exact = true
	unknown := map[string]bool{}
	return rawQuery(t, query, 3, func(row []driver.Value) error {
		rep.EventCount++
		owner, ok := row[0].(int64)
		switch row[1].(type) {
		case nil:
		case string, []byte:
			if !ok {
				keys.missing++
			} else {
				keys.exact = false // a BLOB task_id the join found by its bytes
			}
		default:
			keys.exact = false // a number
		}
		if !ok {
			if key := fmt.Sprint(row[1]); !unknown[key] {
				unknown[key] = true
				rep.EventInconsistencyCount++
			}
			return nil
		}
		pos, _ := row[2].(int64)
		chains.advance(owner, pos)
		return nil
	})
}

// checkTasks streams the task rows: the state counts, each row's value
// and time checks, orphans, and whether the chain its owner holds is the
// one the owner's row implies. A row whose chain another row owns (only
// when ids of other types exist) takes that row's verdict, looked up
// after the pass.
func checkTasks(t *txn, chains *chainStates, anyIDs bool, rep *DoctorReport) error {
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
		countStates(rep, &d)
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
		chainOK := chains.intact(rowid, chainLength(&d))
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
	return cyclesOf(edges), err
}

// cyclesOf counts the cycles among edges (at most one per child), each
// once; it sorts edges by child.
func cyclesOf(edges []parentEdge) int {
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
	return cycles
}
