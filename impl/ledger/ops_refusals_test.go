package ledger

import (
	"errors"
	"testing"
)

// unwritten runs op and requires it to be refused with class and reason
// (the refusal of that very check, not another that a write would meet
// later, such as the row check), and the ledger's files to be byte for
// byte what they were: a refused operation writes nothing.
func unwritten(t *testing.T, p string, class error, reason, what string, op func() (Task, error)) {
	t.Helper()
	db, wal := fileSHA(t, p), fileSHA(t, p+"-wal")
	_, err := op()
	if !errors.Is(err, class) || Reason(err) != reason {
		t.Fatalf("%s: %v, want %v (%s)", what, err, class, reason)
	}
	if fileSHA(t, p) != db || fileSHA(t, p+"-wal") != wal {
		t.Fatalf("%s: refused, yet the ledger's files changed", what)
	}
}

// TestHeartbeatClockBackwardsAfterHeartbeat: a heartbeat earlier than the
// task's last update is ErrClockBackwards itself (spec 6), whichever
// call made that update: here a heartbeat, not the start, and by a
// fraction of a second. It writes nothing, the task still reads as the
// last heartbeat left it, and a heartbeat at the same time is not
// backwards. Planted bug: heartbeat compares the clock with the start
// time only (TestClockBackwards heartbeats right after the start).
func TestHeartbeatClockBackwardsAfterHeartbeat(t *testing.T) {
	l, clk, p := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	clk.now = 1005
	if _, err := l.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	clk.now = 1010
	beat, err := l.Heartbeat(task.ID)
	if err != nil {
		t.Fatal(err)
	}
	clk.now = 1009.75
	unwritten(t, p, ErrClockBackwards, "clock moved backwards", "heartbeat before the last heartbeat", func() (Task, error) { return l.Heartbeat(task.ID) })
	if got, err := l.Get(task.ID); err != nil || !got.UpdatedAt.Equal(unixTime(1010)) || got.Version != beat.Version {
		t.Fatalf("after the refused heartbeat: updated_at %v version %d (%v), want 1010 and %d", got.UpdatedAt, got.Version, err, beat.Version)
	}
	clk.now = 1010
	again, err := l.Heartbeat(task.ID)
	if err != nil || again.Version != beat.Version+1 || !again.UpdatedAt.Equal(unixTime(1010)) {
		t.Fatalf("heartbeat at the same time: version %d updated_at %v (%v), want version %d", again.Version, again.UpdatedAt, err, beat.Version+1)
	}
	healthy(t, l)
}

// TestInternalTaskRefusesDeliveredAndFailed: an internal task (no
// delivery required) only ever becomes not_applicable (spec 3): delivered
// and failed are StateConflict on it, when it is terminal and before the
// code is looked at (a malformed code does not turn it into InvalidInput),
// and write nothing; not_applicable then succeeds. The other way round, a
// delivery-required task refuses not_applicable. Planted bug: the kind
// check dropped (only the rapid model test saw it).
func TestInternalTaskRefusesDeliveredAndFailed(t *testing.T) {
	l, clk, p := openTest(t)
	internalTask, err := l.Create(CreateParams{Internal: true})
	if err != nil {
		t.Fatal(err)
	}
	required, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	clk.now = 1001
	for _, id := range []string{internalTask.ID, required.ID} {
		if _, err := l.CloseTask(id, StatusSucceeded, ""); err != nil {
			t.Fatal(err)
		}
	}
	clk.now = 1002
	bad := "Not A Registered Code"
	const kindReason = "delivery state not allowed for this kind of task"
	for _, c := range []struct {
		status DeliveryStatus
		code   *string
	}{{DeliveryDelivered, nil}, {DeliveryFailed, nil}, {DeliveryDelivered, &bad}, {DeliveryFailed, &bad}} {
		what := "internal task set " + string(c.status)
		if c.code != nil {
			what += " with a malformed code"
		}
		unwritten(t, p, ErrStateConflict, kindReason, what, func() (Task, error) { return l.setDeliveryCode(internalTask.ID, c.status, c.code) })
	}
	unwritten(t, p, ErrStateConflict, kindReason, "required task set not_applicable", func() (Task, error) {
		return l.SetDelivery(required.ID, DeliveryNotApplicable, "")
	})
	if got, err := l.SetDelivery(internalTask.ID, DeliveryNotApplicable, ""); err != nil || got.DeliveryStatus != DeliveryNotApplicable {
		t.Fatalf("internal task set not_applicable: %v %v", got.DeliveryStatus, err)
	}
	if got, err := l.SetDelivery(required.ID, DeliveryDelivered, ""); err != nil || got.DeliveryStatus != DeliveryDelivered {
		t.Fatalf("required task set delivered: %v %v", got.DeliveryStatus, err)
	}
	healthy(t, l)
}

// TestEmptyCodeIsMalformed: a reason code given as the empty string is a
// given code, and a malformed one (spec 3, 19.1 item 20): closing a
// task or its delivery with it is InvalidInput and writes nothing, while
// no code at all (nil) succeeds. Planted bug: an empty code taken for an
// absent one (only a script test pinned it, through the CLI).
func TestEmptyCodeIsMalformed(t *testing.T) {
	l, clk, p := openTest(t)
	task, err := l.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	const codeReason = "reason code is not registered for the requested state"
	clk.now = 1001
	for _, status := range []Status{StatusSucceeded, StatusFailed, StatusTimedOut, StatusCancelled} {
		unwritten(t, p, ErrInvalidInput, codeReason, "close "+string(status)+" with code ''", func() (Task, error) {
			return l.closeTaskCode(task.ID, status, &empty)
		})
	}
	if _, err := l.closeTaskCode(task.ID, StatusFailed, nil); err != nil {
		t.Fatalf("close without a code: %v", err)
	}
	clk.now = 1002
	for _, status := range []DeliveryStatus{DeliveryDelivered, DeliveryFailed} {
		unwritten(t, p, ErrInvalidInput, codeReason, "delivery "+string(status)+" with code ''", func() (Task, error) {
			return l.setDeliveryCode(task.ID, status, &empty)
		})
	}
	if got, err := l.setDeliveryCode(task.ID, DeliveryFailed, nil); err != nil || got.DeliveryCode != NoCode {
		t.Fatalf("delivery without a code: %v %v", got.DeliveryCode, err)
	}
	healthy(t, l)
}
