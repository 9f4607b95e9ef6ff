package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// eventsText renders events as the command line prints them, one per line.
func eventsText(t *testing.T, events []Event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		js, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(js)
		b.WriteByte('\n')
	}
	return b.String()
}

// A task's history is its events in the order they happened, each with
// its kind, states, code and time, and nothing else.
func TestHistoryListsEventsOldestFirst(t *testing.T) {
	l, clk, _ := openTest(t)
	hash := strings.Repeat("ab", 32)
	task, err := l.Create(timeoutSeconds(CreateParams{PayloadHash: hash}, 30))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := l.Create(CreateParams{Internal: true})
	clk.now = 1001.5
	l.Start(task.ID)
	l.CloseTask(other.ID, StatusCancelled, "")
	clk.now = 1002
	if _, err := l.CloseTask(task.ID, StatusFailed, "worker_failed"); err != nil {
		t.Fatal(err)
	}
	clk.now = 1003
	if _, err := l.SetDelivery(task.ID, DeliveryFailed, "transport_failed"); err != nil {
		t.Fatal(err)
	}
	got, err := l.History(task.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"created","from":null,"kind":"created","occurred_at":1000.0,"to":"queued"}
{"code":"started","from":"queued","kind":"task_transition","occurred_at":1001.5,"to":"running"}
{"code":"worker_failed","from":"running","kind":"task_transition","occurred_at":1002.0,"to":"failed"}
{"code":"transport_failed","from":"pending","kind":"delivery_transition","occurred_at":1003.0,"to":"failed"}
`
	if text := eventsText(t, got); text != want {
		t.Fatalf("history:\n%s\nwant:\n%s", text, want)
	}
	if strings.Contains(fmt.Sprintf("%+v", got), hash) {
		t.Fatal("history holds the payload fingerprint")
	}
	got, err = l.History(other.ID)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"code":"created","from":null,"kind":"created","occurred_at":1000.0,"to":"queued"}
{"code":null,"from":"queued","kind":"task_transition","occurred_at":1001.5,"to":"cancelled"}
`
	if text := eventsText(t, got); text != want {
		t.Fatalf("history of the internal task:\n%s\nwant:\n%s", text, want)
	}
}

// History refuses as Get does: a malformed id is InvalidInput, an unknown
// one TaskNotFound; and a context that ended is answered as such.
func TestHistoryRefusesAsGet(t *testing.T) {
	l, _, _ := openTest(t)
	if _, err := l.History("not-a-uuid"); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("malformed id: %v", err)
	}
	unknown := "00000000-0000-4000-8000-0000000000ff"
	_, getErr := l.Get(unknown)
	_, err := l.History(unknown)
	if !errors.Is(err, ErrTaskNotFound) || Reason(err) != Reason(getErr) {
		t.Fatalf("unknown id: %v (get: %v)", err, getErr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.HistoryContext(ctx, unknown); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// An event its task's row cannot hold (a planted code, a kind or a state
// no event has, a time other than the row's) makes History StateConflict,
// and none of its text reaches the answer.
func TestHistoryRefusesADamagedEvent(t *testing.T) {
	for _, set := range []string{
		"code = 'planted_secret'",
		"event_kind = 'planted_secret'",
		"to_value = 'planted_secret'",
		"from_value = 'planted_secret'",
		"occurred_at = 5",
		"occurred_at = 'planted_secret'",
		"code = X'706c616e746564'",
	} {
		t.Run(set, func(t *testing.T) {
			l, clk, _ := openTest(t)
			task, _ := l.Create(CreateParams{})
			clk.now = 1001
			l.Start(task.ID)
			if _, err := l.History(task.ID); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, s := range []string{
				"PRAGMA ignore_check_constraints = 1",
				"UPDATE task_events SET " + set + " WHERE sequence = (SELECT max(sequence) FROM task_events)",
				"PRAGMA ignore_check_constraints = 0",
			} {
				if _, err := l.conn.ExecContext(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.History(task.ID)
			if !errors.Is(err, ErrStateConflict) || got != nil {
				t.Fatalf("got %v, %v", got, err)
			}
			if strings.Contains(err.Error(), "planted") || Reason(err) != "stored event is not consistent with its task" {
				t.Fatalf("error %q", err)
			}
		})
	}
}

// Law: a task's history replays to its row. Over random operations on a
// small forest, for every task: the first event is the creation at
// created_at; the task events lead from queued to the row's status, with
// the row's started_at, ended_at and terminal code; the delivery event,
// when there is one, reaches the row's delivery status with its code at
// delivery_updated_at; and the events of all tasks add up to the doctor's
// event count.
func TestHistoryReplaysToTheRow(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			l, clk, _ := openTest(t)
			var ids []string
			for i := 0; i < 60; i++ {
				clk.now += float64(rng.Intn(3))
				switch op := rng.Intn(6); {
				case op == 0 || len(ids) == 0:
					p := CreateParams{Internal: rng.Intn(3) == 0, Timeout: new(time.Duration(rng.Intn(5)) * time.Second)}
					if len(ids) > 0 && rng.Intn(2) == 0 {
						p.ParentID = ids[rng.Intn(len(ids))]
					}
					if task, err := l.Create(p); err == nil {
						ids = append(ids, task.ID)
					}
				case op == 1:
					l.Start(ids[rng.Intn(len(ids))])
				case op == 2:
					l.CloseTask(ids[rng.Intn(len(ids))], []Status{StatusSucceeded, StatusFailed, StatusCancelled}[rng.Intn(3)], "")
				case op == 3:
					l.SetDelivery(ids[rng.Intn(len(ids))], []DeliveryStatus{DeliveryDelivered, DeliveryNotApplicable}[rng.Intn(2)], "")
				case op == 4:
					l.Heartbeat(ids[rng.Intn(len(ids))])
				default:
					l.reconcileFloat(float64(rng.Intn(3)), float64(rng.Intn(3)), false)
				}
			}
			events := 0
			for _, id := range ids {
				task, err := l.Get(id)
				if err != nil {
					t.Fatal(err)
				}
				hist, err := l.History(id)
				if err != nil {
					t.Fatal(err)
				}
				events += len(hist)
				if err := replayHistory(task, hist); err != nil {
					t.Fatalf("task %s: %v\n%s", id, err, eventsText(t, hist))
				}
			}
			rep, err := l.Doctor()
			if err != nil || !rep.Healthy || rep.EventCount != events {
				t.Fatalf("doctor %+v (%v), %d events in the histories", rep, err, events)
			}
		})
	}
}

// replayHistory walks a task's events and compares where they lead with
// the task's row.
func replayHistory(task Task, hist []Event) error {
	if len(hist) == 0 || hist[0].Kind != EventCreated || hist[0].To != string(StatusQueued) || !hist[0].OccurredAt.Equal(task.CreatedAt) {
		return errors.New("no creation first")
	}
	status, delivery := string(StatusQueued), string(DeliveryPending)
	var started, ended *time.Time
	var terminalCode, deliveryCode *string
	deliveryAt := task.CreatedAt
	for _, e := range hist[1:] {
		at := e.OccurredAt
		switch e.Kind {
		case EventTaskTransition:
			if e.From == nil || *e.From != status {
				return fmt.Errorf("task event from %v, state %s", e.From, status)
			}
			status = e.To
			if status == string(StatusRunning) {
				started = &at
			} else {
				ended, terminalCode = &at, e.Code
			}
		case EventDeliveryTransition:
			if e.From == nil || *e.From != delivery {
				return fmt.Errorf("delivery event from %v, state %s", e.From, delivery)
			}
			delivery, deliveryCode, deliveryAt = e.To, e.Code, at
		default:
			return fmt.Errorf("kind %s after the creation", e.Kind)
		}
	}
	same := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	sameText := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	switch {
	case status != string(task.Status), delivery != string(task.DeliveryStatus):
		return fmt.Errorf("replayed to %s/%s", status, delivery)
	case !same(started, task.StartedAt), !same(ended, task.EndedAt), !deliveryAt.Equal(task.DeliveryUpdatedAt):
		return errors.New("replayed times differ")
	case !sameText(terminalCode, task.TerminalCode.optional()), !sameText(deliveryCode, task.DeliveryCode.optional()):
		return errors.New("replayed codes differ")
	}
	return nil
}
