package ledger

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
)

// Doctor checks the ledger read-only and reports counts only (contract
// §6). When the schema is not exactly v2 it returns the early report: all
// counts zero, SchemaOK false, DoctorErrorCount 1.
func (l *Ledger) Doctor() (DoctorReport, error) {
	var rep DoctorReport
	// Doctor reports on any schema (the early report), so it skips the
	// schema gate the other reads have.
	err := l.lockedReadTx("doctor", false, func(t *txn) error {
		rep = runDoctor(t)
		return nil
	})
	if err != nil {
		return DoctorReport{}, err
	}
	return rep, nil
}

// newDoctorReport is the all-zero report with every state key present.
func newDoctorReport() DoctorReport {
	r := DoctorReport{QuickCheck: "ok", TaskStatusCounts: map[string]int{}, DeliveryStatusCounts: map[string]int{}}
	for _, s := range taskStates {
		r.TaskStatusCounts[s] = 0
	}
	for _, s := range deliveryStates {
		r.DeliveryStatusCounts[s] = 0
	}
	return r
}

// doctorTask is one tasks row as stored, with types unchecked.
type doctorTask struct {
	id, parent, status, delivery, hash, tcode, dcode any
	required, timeout, version                       any
	created, started, updated, ended, deadline, dup  any
}

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

	tasks, terr := loadDoctorTasks(t, &rep)
	fk, ferr := countRows(t, "PRAGMA foreign_key_check")
	for _, e := range []error{terr, ferr} {
		if e != nil {
			rep.DoctorErrorCount++
		}
	}
	rep.ForeignKeyErrorCount = fk
	rep.TaskCount = len(tasks.entries)

	events, unknown, eerr := streamEvents(t, tasks)
	if eerr != nil {
		rep.DoctorErrorCount++
	}
	rep.EventCount = events
	rep.EventInconsistencyCount += unknown

	for i := range tasks.entries {
		e := &tasks.entries[i]
		parent := -1
		switch e.parentKind {
		case parentText:
			if j, ok := tasks.byID[e.parent]; ok {
				parent = int(j)
			} else {
				rep.OrphanCount++
			}
		case parentOther:
			rep.OrphanCount++
		}
		if !e.stateOK {
			rep.StateInconsistencyCount++
		}
		timesOK := e.timesOK
		if timesOK && parent >= 0 {
			if p := &tasks.entries[parent]; p.createdOK && e.created < p.created {
				timesOK = false
			}
		}
		if !timesOK {
			rep.TimestampInconsistencyCount++
		}
		c := -1
		if j, ok := tasks.byKey[e.key]; ok {
			c = int(j)
		}
		if c < 0 || tasks.entries[c].chainBad || int(tasks.entries[c].chainNext) != tasks.entries[c].chainLen() {
			rep.EventInconsistencyCount++
		}
	}
	rep.ParentCycleCount = countCycles(tasks)

	rep.Healthy = rep.QuickCheck == "ok" && rep.SchemaOK && rep.OrphanCount == 0 && rep.ParentCycleCount == 0 &&
		rep.ForeignKeyErrorCount == 0 && rep.StateInconsistencyCount == 0 && rep.TimestampInconsistencyCount == 0 &&
		rep.EventInconsistencyCount == 0 && rep.DoctorErrorCount == 0
	return rep
}

// quickCheck reports whether PRAGMA quick_check passes. Most of its cost
// is evaluating the CHECK constraints row by row; when the schema is
// exactly v2 (so the file's CHECK constraints are checkConstraintsSQL's)
// and the ledger is read-only (nothing can be written while checks are
// off), the structural check runs with CHECK constraints ignored and one
// aggregate query counts the rows that violate them instead, which gives
// the same answer in a fraction of the time.
func quickCheck(t *txn, canonicalSchema bool) bool {
	if !canonicalSchema || !t.l.readOnly {
		return quickCheckOK(t)
	}
	if _, err := t.l.conn.ExecContext(t.ctx, "PRAGMA ignore_check_constraints = 1"); err != nil {
		return quickCheckOK(t)
	}
	structural := quickCheckOK(t)
	_, rerr := t.l.conn.ExecContext(t.ctx, "PRAGMA ignore_check_constraints = 0")
	if on, err := t.l.pragmaInt("PRAGMA ignore_check_constraints"); rerr != nil || err != nil || on != 0 {
		// Refuse to go on with checks off; the ledger is read-only anyway.
		return false
	}
	if !structural {
		return false
	}
	var violations int
	if err := t.l.conn.QueryRowContext(t.ctx, checkConstraintsSQL).Scan(&violations); err != nil {
		return false
	}
	return violations == 0
}

// checkConstraintsSQL counts the rows of a v2 file that violate one of the
// schema's CHECK constraints, written exactly as schemaDDL states them. A
// CHECK fails only when its expression is false (NULL passes), as NOT of
// each expression expresses.
const checkConstraintsSQL = `SELECT
  (SELECT count(*) FROM tasks WHERE
      NOT (status IN ('queued','running','succeeded','failed','timed_out','cancelled'))
   OR NOT (delivery_status IN ('pending','delivered','failed','not_applicable'))
   OR NOT (delivery_required IN (0,1))
   OR NOT (payload_hash IS NULL OR (length(payload_hash) = 64 AND payload_hash NOT GLOB '*[^0-9a-f]*'))
   OR NOT (timeout_seconds IS NULL OR timeout_seconds >= 0)
   OR NOT (version >= 0)
   OR NOT (parent_id IS NULL OR parent_id <> id)
   OR NOT (deadline_at IS NULL OR started_at IS NOT NULL)
   OR NOT ((status IN ('queued','running') AND ended_at IS NULL)
        OR (status IN ('succeeded','failed','timed_out','cancelled') AND ended_at IS NOT NULL)))
+ (SELECT count(*) FROM task_events WHERE
      NOT (event_kind IN ('created','task_transition','delivery_transition')))`

// quickCheckOK runs PRAGMA quick_check; anything but a single "ok" fails.
func quickCheckOK(t *txn) bool {
	rows, err := t.l.conn.QueryContext(t.ctx, "PRAGMA quick_check")
	if err != nil {
		return false
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return false
		}
		lines = append(lines, s)
	}
	return rows.Err() == nil && len(lines) == 1 && lines[0] == "ok"
}

func countRows(t *txn, query string) (int, error) {
	rows, err := t.l.conn.QueryContext(t.ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

// Parent kinds of a doctorEntry.
const (
	parentNone  = iota // NULL
	parentText         // a TEXT value (the driver's string)
	parentOther        // any other type: always an orphan
)

// doctorEntry is what the doctor keeps of one tasks row after its own
// checks ran while the row streamed by: the parts the parent, orphan,
// cycle and event-chain checks still need, and no boxed column values.
type doctorEntry struct {
	key        string // the id as text ("" when it is not text)
	keyOK      bool   // the id is TEXT (string or bytes from the driver)
	strID      bool   // the driver returned the id as a string
	parent     string // the parent id as text (string or bytes)
	parentOK   bool   // the parent id is TEXT
	parentKind uint8
	stateOK    bool
	timesOK    bool // every timestamp check except the parent's creation

	created                   float64
	createdOK                 bool
	status, delivery          string // as text, "" otherwise
	tcode, dcode              string
	started                   bool // started_at is not NULL
	startedAt, ended, dup     float64
	startedOK, endedOK, dupOK bool

	chainNext uint8 // events matched so far
	chainBad  bool
}

// doctorTasks are the entries in row order with two indexes: byKey maps
// an id as text to the last entry with it (whose chain the events
// advance), byID does the same for ids the driver returned as strings
// (parents are looked up there).
type doctorTasks struct {
	entries []doctorEntry
	byKey   map[string]int32
	byID    map[string]int32
}

// intern returns the constant for a known state or code, so that entries
// do not keep the driver's per-row strings alive.
func intern(s string) string {
	switch s {
	case StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusTimedOut, StatusCancelled,
		DeliveryPending, DeliveryDelivered, DeliveryNotApplicable:
		return internedStates[s]
	}
	if c, ok := internedCodes[s]; ok {
		return c
	}
	return s
}

var internedStates, internedCodes = func() (map[string]string, map[string]string) {
	states := map[string]string{}
	for _, s := range []string{StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusTimedOut, StatusCancelled,
		DeliveryPending, DeliveryDelivered, DeliveryNotApplicable} {
		states[s] = s
	}
	codes := map[string]string{}
	for _, reg := range []map[string][]string{taskCodes, deliveryCodes} {
		for _, list := range reg {
			for _, c := range list {
				codes[c] = c
			}
		}
	}
	return states, codes
}()

// loadDoctorTasks streams the tasks table once: it counts the states into
// rep, runs each row's own checks, and keeps a compact entry per row.
func loadDoctorTasks(t *txn, rep *DoctorReport) (*doctorTasks, error) {
	out := &doctorTasks{}
	var n int
	if err := t.l.conn.QueryRowContext(t.ctx, `SELECT count(*) FROM tasks`).Scan(&n); err == nil {
		out.entries = make([]doctorEntry, 0, n)
	}
	sawBytesID := false
	var d doctorTask
	err := rawQuery(t, `SELECT id, parent_id, status, delivery_status, delivery_required, payload_hash,
		timeout_seconds, created_at, started_at, updated_at, ended_at, deadline_at, delivery_updated_at,
		terminal_code, delivery_code, version FROM tasks`, 16, func(r []driver.Value) error {
		d = doctorTask{
			id: r[0], parent: r[1], status: r[2], delivery: r[3], required: r[4], hash: r[5],
			timeout: r[6], created: r[7], started: r[8], updated: r[9], ended: r[10], deadline: r[11], dup: r[12],
			tcode: r[13], dcode: r[14], version: r[15],
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
		var e doctorEntry
		e.key, e.keyOK = asText(d.id)
		if _, isBytes := d.id.([]byte); isBytes {
			sawBytesID = true
		}
		_, e.strID = d.id.(string)
		e.parent, e.parentOK = asText(d.parent)
		switch d.parent.(type) {
		case nil:
		case string:
			e.parentKind = parentText
		default:
			e.parentKind = parentOther
		}
		e.stateOK = taskStateOK(&d)
		e.timesOK = taskTimesOK(&d)
		e.created, e.createdOK = asTime(d.created)
		status, _ := asText(d.status)
		delivery, _ := asText(d.delivery)
		tcode, _ := asText(d.tcode)
		dcode, _ := asText(d.dcode)
		e.status, e.delivery, e.tcode, e.dcode = intern(status), intern(delivery), intern(tcode), intern(dcode)
		e.started = d.started != nil
		e.startedAt, e.startedOK = asTime(d.started)
		e.ended, e.endedOK = asTime(d.ended)
		e.dup, e.dupOK = asTime(d.dup)
		out.entries = append(out.entries, e)
		return nil
	})
	out.byKey = make(map[string]int32, len(out.entries))
	for i := range out.entries {
		if e := &out.entries[i]; e.keyOK {
			out.byKey[e.key] = int32(i)
		}
	}
	out.byID = out.byKey
	if sawBytesID {
		// Only ids the driver returned as strings may be parents.
		out.byID = make(map[string]int32, len(out.entries))
		for i := range out.entries {
			if s, ok := out.entries[i].stringID(); ok {
				out.byID[s] = int32(i)
			}
		}
	}
	return out, err
}

// asText returns a TEXT value (the driver may hand out string or []byte).
func asText(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	}
	return "", false
}

// asTime returns a finite number; ok is false for NULL, text or non-finite.
func asTime(v any) (float64, bool) {
	switch f := v.(type) {
	case float64:
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	case int64:
		return float64(f), true
	}
	return 0, false
}

// optTime returns (nil, true) for NULL, the value for a finite number, and
// ok false for anything else.
func optTime(v any) (*float64, bool) {
	if v == nil {
		return nil, true
	}
	f, ok := asTime(v)
	if !ok {
		return nil, false
	}
	return &f, true
}

func taskStateOK(d *doctorTask) bool {
	id, ok := asText(d.id)
	if !ok || !isCanonicalID(id) {
		return false
	}
	if d.parent != nil {
		p, ok := asText(d.parent)
		if !ok || !isCanonicalID(p) {
			return false
		}
	}
	status, ok1 := asText(d.status)
	delivery, ok2 := asText(d.delivery)
	if !ok1 || !ok2 || !isTaskState(status) || !isDeliveryState(delivery) {
		return false
	}
	req, ok := d.required.(int64)
	if !ok || (req != 0 && req != 1) {
		return false
	}
	if d.hash != nil {
		h, ok := asText(d.hash)
		if !ok || !validPayloadHash(h) {
			return false
		}
	}
	if d.timeout != nil {
		f, ok := asTime(d.timeout)
		if !ok || f < 0 {
			return false
		}
	}
	terminal := isTerminal(status)
	// ended_at is set exactly when the task is terminal. The schema's CHECK
	// says so too, but a file edited with CHECK constraints off holds such
	// rows, and the operations read rows through these rules (rowcheck.go).
	if terminal != (d.ended != nil) {
		return false
	}
	if d.tcode != nil {
		c, ok := asText(d.tcode)
		if !ok || !terminal || !taskCodeAllowed(status, c) {
			return false
		}
	}
	if d.dcode != nil {
		c, ok := asText(d.dcode)
		if !ok || delivery == DeliveryPending || !deliveryCodeAllowed(delivery, c) {
			return false
		}
	}
	if delivery != DeliveryPending && !terminal {
		return false
	}
	if req == 1 && delivery == DeliveryNotApplicable {
		return false
	}
	if req == 0 && (delivery == DeliveryDelivered || delivery == DeliveryFailed) {
		return false
	}
	version, ok := d.version.(int64)
	if !ok {
		return false
	}
	implied := int64(0)
	if d.started != nil {
		implied++
	}
	if terminal {
		implied++
	}
	if delivery != DeliveryPending {
		implied++
	}
	return version >= implied
}

func taskTimesOK(d *doctorTask) bool {
	created, ok1 := asTime(d.created)
	updated, ok2 := asTime(d.updated)
	dup, ok3 := asTime(d.dup)
	started, ok4 := optTime(d.started)
	ended, ok5 := optTime(d.ended)
	deadline, ok6 := optTime(d.deadline)
	timeout, ok7 := optTime(d.timeout)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return false
	}
	if updated < created || dup < created {
		return false
	}
	if started != nil && (*started < created || updated < *started) {
		return false
	}
	if ended != nil && (*ended < created || (started != nil && *ended < *started)) {
		return false
	}
	status, _ := asText(d.status)
	delivery, _ := asText(d.delivery)
	if isTerminal(status) && (ended == nil || updated != *ended) {
		return false
	}
	if deadline != nil && (started == nil || timeout == nil || *deadline != *started+*timeout) {
		return false
	}
	if deadline == nil && started != nil && timeout != nil {
		return false
	}
	if status == StatusQueued && (started != nil || deadline != nil) {
		return false
	}
	if status == StatusRunning && started == nil {
		return false
	}
	if delivery == DeliveryPending && dup != created {
		return false
	}
	if delivery != DeliveryPending && (ended == nil || dup < *ended) {
		return false
	}
	return true
}

// chainLen is the number of events the row implies (contract §6):
// created, then started if it started, then the terminal transition with
// the task's code at ended_at, then the delivery transition with the
// delivery code at delivery_updated_at.
func (e *doctorEntry) chainLen() int {
	n := 1
	if e.started {
		n++
	}
	if isTerminal(e.status) {
		n++
	}
	if e.delivery != DeliveryPending {
		n++
	}
	return n
}

// chainEvent returns the k-th event of the chain: kind, from, to and code
// (empty for NULL; no valid stored value is empty) and its time.
func (e *doctorEntry) chainEvent(k int) (kind, from, to, code string, at float64, atOK bool) {
	if k == 0 {
		return eventCreated, "", StatusQueued, codeCreated, e.created, e.createdOK
	}
	k--
	if e.started {
		if k == 0 {
			return eventTaskTransition, StatusQueued, StatusRunning, codeStarted, e.startedAt, e.startedOK
		}
		k--
	}
	if isTerminal(e.status) {
		if k == 0 {
			from := StatusQueued
			if e.started {
				from = StatusRunning
			}
			return eventTaskTransition, from, e.status, e.tcode, e.ended, e.endedOK
		}
	}
	return eventDeliveryTransition, DeliveryPending, e.delivery, e.dcode, e.dup, e.dupOK
}

// stringID is the id when the driver returned it as a string.
func (e *doctorEntry) stringID() (string, bool) { return e.key, e.keyOK && e.strID }

// optText returns a nullable TEXT column as the chain compares it: ""
// for NULL, and ok false for a non-text or empty value (no valid stored
// value is empty, so "" can stand for NULL).
func optText(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok && s != ""
}

// streamEvents reads task_events in sequence order and advances each
// task's chain, without keeping the events: it returns the event count
// and the number of distinct task ids that have events but no row. The
// columns are selected plain and their types checked here (the driver
// returns TEXT as string): type tests in SQL cost more than the scan.
func streamEvents(t *txn, tasks *doctorTasks) (count, unknown int, err error) {
	seen := map[string]bool{}
	err = rawQuery(t, `SELECT task_id, event_kind, from_value, to_value, code, occurred_at
		FROM task_events ORDER BY sequence`, 6, func(row []driver.Value) error {
		count++
		id, _ := asText(row[0])
		j, ok := tasks.byKey[id]
		if !ok {
			key := fmt.Sprint(row[0])
			if !seen[key] {
				seen[key] = true
				unknown++
			}
			return nil
		}
		c := &tasks.entries[j]
		if c.chainBad {
			return nil
		}
		_, idText := row[0].(string)
		kind, kindOK := row[1].(string)
		from, fromOK := optText(row[2])
		to, toOK := row[3].(string)
		code, codeOK := optText(row[4])
		at, atOK := asTime(row[5])
		if int(c.chainNext) >= c.chainLen() || !(idText && kindOK && fromOK && toOK && codeOK && atOK) {
			c.chainBad = true
			return nil
		}
		wantKind, wantFrom, wantTo, wantCode, wantAt, wantOK := c.chainEvent(int(c.chainNext))
		if kind != wantKind || from != wantFrom || to != wantTo || code != wantCode || !wantOK || at != wantAt {
			c.chainBad = true
			return nil
		}
		c.chainNext++
		return nil
	})
	return count, unknown, err
}

// rawQuery runs a query on the driver connection itself, inside the
// current transaction, and hands each row's driver values to each. It
// skips database/sql's per-column conversion, which dominates a scan of
// every row.
func rawQuery(t *txn, query string, ncols int, each func([]driver.Value) error) error {
	return t.l.conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return errors.New("driver cannot query directly")
		}
		rows, err := q.QueryContext(t.ctx, query, nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, ncols)
		for {
			err := rows.Next(dest)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := each(dest); err != nil {
				return err
			}
		}
	})
}

// countCycles counts parent cycles, each once, by walking parent links.
func countCycles(tasks *doctorTasks) int {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(tasks.entries))
	cycles := 0
	var path []string
	for i := range tasks.entries {
		start, ok := tasks.entries[i].key, tasks.entries[i].keyOK
		if !ok || state[start] != unseen {
			continue
		}
		path = path[:0]
		cur := start
		for {
			if s := state[cur]; s == onPath {
				cycles++
				break
			} else if s == done {
				break
			}
			state[cur] = onPath
			path = append(path, cur)
			j, ok := tasks.byID[cur]
			if !ok {
				break
			}
			node := &tasks.entries[j]
			if !node.parentOK {
				break
			}
			if _, ok := tasks.byID[node.parent]; !ok {
				break
			}
			cur = node.parent
		}
		for _, n := range path {
			state[n] = done
		}
	}
	return cycles
}
