package ledger

import "database/sql/driver"

// Every tasks row an operation reads (get, children, the task writes, the
// existing row and the parent create looks up, the rows reconcile
// examines) is checked before anything uses it, by the doctor's own
// per-row rules: taskStateOK and taskTimesOK (spec 8.2 and 8.3), one
// reading of the rules for the doctor and the operations. A row that
// breaks one is refused with StateConflict, so a damaged row is never
// returned, printed or written on top of; the doctor goes on counting
// such rows instead. The rules that need other rows (a child created
// before its parent, orphans, cycles) and the event chain stay the
// doctor's alone.

// errDamagedRow refuses a stored task that breaks the ledger's rules. Its
// message names no value: a damaged row may hold anyone's text.
var errDamagedRow = stateConflict("a stored task breaks the ledger's rules")

// rowOK reports whether one row's values, as the driver returned the
// columns of taskColumns in that order, obey the doctor's row rules.
func rowOK(v []driver.Value) bool {
	d := rowValues(v)
	return taskStateOK(&d) && taskTimesOK(&d)
}

// rowValues lays the columns out as the doctor's row type, which
// checkTasks fills from the same column order.
func rowValues(v []driver.Value) doctorTask {
	return doctorTask{
		id: v[0], parent: v[1], status: v[2], delivery: v[3], required: v[4], hash: v[5],
		timeout: v[6], created: v[7], started: v[8], updated: v[9], ended: v[10], deadline: v[11], dup: v[12],
		tcode: v[13], dcode: v[14], version: v[15],
	}
}

// taskFromRow checks one row (rowOK) and converts it to a Task.
func taskFromRow(v []driver.Value) (taskRow, error) {
	if !rowOK(v) {
		return taskRow{}, errDamagedRow
	}
	d := rowValues(v)
	// The checks passed, so every value has the type the rules require.
	t := taskRow{}
	t.ID, _ = asText(d.id)
	t.ParentID = nullableText(d.parent)
	status, _ := asText(d.status)
	delivery, _ := asText(d.delivery)
	t.Status, t.DeliveryStatus = Status(status), DeliveryStatus(delivery)
	t.DeliveryRequired = d.required.(int64) == 1
	t.PayloadHash = nullableText(d.hash)
	t.TimeoutSeconds, _ = optTime(d.timeout)
	t.CreatedAt, _ = asTime(d.created)
	t.StartedAt, _ = optTime(d.started)
	t.UpdatedAt, _ = asTime(d.updated)
	t.EndedAt, _ = optTime(d.ended)
	t.DeadlineAt, _ = optTime(d.deadline)
	t.DeliveryUpdatedAt, _ = asTime(d.dup)
	t.TerminalCode = nullableText(d.tcode)
	t.DeliveryCode = nullableText(d.dcode)
	t.Version = d.version.(int64)
	return t, nil
}

// nullableText returns a checked nullable TEXT column: nil for NULL.
func nullableText(v any) *string {
	if v == nil {
		return nil
	}
	s, _ := asText(v)
	return &s
}
