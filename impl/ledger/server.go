package ledger

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
)

// A ledger held by a database server (docs/design/ledger-on-postgresql.md)
// keeps every rule here and its rows in a serverstore.Store: the write
// operations load the task under the store's lock and call the same
// decisions (decide.go) as the SQLite engine, and every row a store reads
// passes the same row checks.

// errNotOnServer answers the operations a server ledger does not offer
// yet. It carries no class: the command line answers it as an internal
// error.
var errNotOnServer = errors.New("ledger: operation not yet available on a database server")

// OpenOnServer makes a Ledger whose rows live in the store connect
// opens with the settings resolved from opts. It is how an engine package
// (impl/ledger/postgres) opens a ledger; the store's type is internal to
// the ledger, so no other package can call it. Of opts, ReadOnly, MustExist,
// BusyTimeout and NewID apply, and AllowExternalACL to a backup's file;
// Clock does not (the store tells the time), nor do the other settings
// of a file.
func OpenOnServer(opts Options, connect func(serverstore.Settings) (serverstore.Store, error)) (*Ledger, error) {
	busyMS, err := opts.busyTimeoutMS()
	if err != nil {
		return nil, err
	}
	store, err := connect(serverstore.Settings{BusyTimeoutMS: busyMS, ReadOnly: opts.ReadOnly, MustExist: opts.MustExist})
	if err != nil {
		return nil, serverError("open database", err)
	}
	l := &Ledger{
		turn:     make(chan struct{}, 1),
		server:   store,
		newID:    opts.NewID,
		readOnly: opts.ReadOnly,
		// For a backup's file, which the storage rules of a file hold.
		allowExternalACL: opts.AllowExternalACL,
		schema:           schemaStatus{exact: true, version: 2},
		// The server enforces the foreign keys; the store refused a
		// schema another role owns or is granted at open.
		info: StorageInfo{BusyTimeoutMS: busyMS, ForeignKeys: true, PermissionModel: "schema_owner", Engine: EnginePostgreSQL},
	}
	if l.newID == nil {
		l.newID = randomTaskID
	}
	return l, nil
}

// serverError maps a store's answer onto the ledger's errors. An error
// the ledger's own code made inside the transaction passes unchanged.
func serverError(op string, err error) error {
	var ce *classError
	var ie *internalError
	var ended *cancelledError
	switch {
	case err == nil, errors.As(err, &ce), errors.As(err, &ie), errors.As(err, &ended), errors.Is(err, ErrClosed):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return cancelled(err)
	case errors.Is(err, serverstore.ErrBusy):
		return ErrBusy
	case errors.Is(err, serverstore.ErrSchemaMismatch):
		return stateConflict("schema does not match")
	case errors.Is(err, serverstore.ErrNoLedger):
		// The counterpart of a missing file: the same class and reason.
		return invalidInput("database does not exist")
	case errors.Is(err, serverstore.ErrInvalidURL):
		return invalidInput("database URL or connection settings are not valid")
	case errors.Is(err, serverstore.ErrUnreachable):
		// Not the caller's input, and maybe passing: exit 3, as a
		// failing disk is.
		return internal("reach the database server", err)
	case errors.Is(err, serverstore.ErrLoginRefused):
		// The credentials or the server's rules must change first.
		return invalidInput("database server refused the login")
	case errors.Is(err, serverstore.ErrForeignOwner):
		// The counterpart of a directory another user owns.
		return invalidInput("database schema is not owned by the connecting role")
	case errors.Is(err, serverstore.ErrGranted):
		// The counterpart of a file others may read or write.
		return invalidInput("database schema is granted to another role or PUBLIC")
	}
	return internal(op, err)
}

// serverLoad checks a row a store read; a missing task is TaskNotFound.
func serverLoad(row serverstore.Row, found bool, err error) (taskRow, error) {
	if err != nil {
		return taskRow{}, err
	}
	if !found {
		return taskRow{}, taskNotFound("task does not exist")
	}
	return taskFromRow(row)
}

// serverWrite runs fn in one write transaction of the store, holding the
// ledger lock as the SQLite engine's writes do.
func (l *Ledger) serverWrite(ctx context.Context, fn func(serverstore.WriteTx) error) error {
	return l.underWriteLock(ctx, func() error {
		if err := ctx.Err(); err != nil {
			return cancelled(err)
		}
		return serverError("write", l.server.Write(ctx, fn))
	})
}

// serverRead runs fn in one read-only transaction of the store.
func (l *Ledger) serverRead(ctx context.Context, fn func(serverstore.ReadTx) error) error {
	if err := l.acquireOpen(ctx); err != nil {
		return err
	}
	defer l.release()
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	return serverError("read", l.server.Read(ctx, fn))
}

// storeServerDecision writes a decision through a store.
func storeServerDecision(tx serverstore.WriteTx, d decision, created bool) error {
	row := make(serverstore.Row, 0, 16)
	for _, v := range taskArgs(d.task) {
		row = append(row, v)
	}
	var err error
	if created {
		err = tx.InsertTask(row)
	} else {
		err = tx.UpdateTask(row)
	}
	if err != nil || d.event.kind == "" {
		return err
	}
	return tx.AddEvent(serverstore.Event{TaskID: d.task.ID, Kind: d.event.kind, From: d.event.from, To: d.event.to, OccurredAt: d.at, Code: d.event.code})
}

// serverNow is a store transaction's clock for the decisions.
func serverNow(tx serverstore.WriteTx) nowFunc {
	return func() (float64, error) { return checkedNow(tx.Now()) }
}

// serverCreate is CreateContext's transaction on a server: the id
// reserved, then the stored task (a repeat) or the parent shared, then
// the decision.
func (l *Ledger) serverCreate(ctx context.Context, id, parent string, p CreateParams) (taskRow, error) {
	var out taskRow
	err := l.serverWrite(ctx, func(tx serverstore.WriteTx) error {
		var err error
		if id, err = l.idOrNew(id); err != nil {
			return err
		}
		if err := tx.ReserveID(id); err != nil {
			return err
		}
		existing, err := serverLoad(tx.LockTask(id))
		if err == nil {
			out = existing
			return decideRepeatCreate(existing, parent, p)
		}
		if !errors.Is(err, ErrTaskNotFound) {
			return err
		}
		var parentTask *taskRow
		if parent != "" {
			found, err := serverLoad(tx.ShareTask(parent))
			if err != nil {
				return err
			}
			parentTask = &found
		}
		d, err := decideCreate(id, parentTask, p, serverNow(tx))
		if err != nil {
			return err
		}
		if err := storeServerDecision(tx, d, true); err != nil {
			return err
		}
		out, err = serverLoad(tx.Task(id))
		return err
	})
	return out, err
}

// serverWriteTask is writeTask's transaction on a server: the task's row
// locked, then the decision.
func (l *Ledger) serverWriteTask(ctx context.Context, id string, decide func(task taskRow, now nowFunc) (decision, error)) (taskRow, error) {
	var out taskRow
	err := l.serverWrite(ctx, func(tx serverstore.WriteTx) error {
		task, err := serverLoad(tx.LockTask(id))
		if err != nil {
			return err
		}
		d, err := decide(task, serverNow(tx))
		if err != nil || !d.changed {
			out = task
			return err
		}
		if err := storeServerDecision(tx, d, false); err != nil {
			return err
		}
		out, err = serverLoad(tx.Task(id))
		return err
	})
	if err != nil {
		return taskRow{}, err
	}
	return out, nil
}

// serverGet is GetContext's read on a server.
func (l *Ledger) serverGet(ctx context.Context, id string) (taskRow, error) {
	var out taskRow
	err := l.serverRead(ctx, func(tx serverstore.ReadTx) error {
		var err error
		out, err = serverLoad(tx.Task(id))
		return err
	})
	return out, err
}

// serverChildren is ChildrenOfContext's read on a server.
func (l *Ledger) serverChildren(ctx context.Context, id string) ([]taskRow, error) {
	out := []taskRow{}
	err := l.serverRead(ctx, func(tx serverstore.ReadTx) error {
		if _, err := serverLoad(tx.Task(id)); err != nil {
			return err
		}
		rows, err := tx.Children(id)
		if err != nil {
			return err
		}
		for _, row := range rows {
			task, err := taskFromRow(row)
			if err != nil {
				return err
			}
			out = append(out, task)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// serverReconcile is ReconcileContext on a server. The rows are counted
// and the plan made as on SQLite (examination, planReconcile); an apply
// first locks the tasks against every other writer, then reads the clock
// and the rows, decides each change the plan counted with
// decideReconcileTimeout and decideReconcileClose, and writes them in
// batches (UpdateTasks, AddEvents), the events in the order the SQLite
// engine's statements append them (step 1 by created_at then id, step 2
// by ended_at then id).
func (l *Ledger) serverReconcile(ctx context.Context, activeGrace, deliveryGrace float64, dryRun bool) (ReconcileReport, error) {
	var rep ReconcileReport
	run := func(tx serverstore.ReadTx, w serverstore.WriteTx) error {
		if w != nil {
			if err := w.LockTasks(); err != nil {
				return err
			}
		}
		var stale, closing []taskRow
		var keep func(bool, serverstore.Row) error
		if w != nil {
			keep = func(isStale bool, row serverstore.Row) error {
				task, err := taskFromRow(row)
				if err != nil {
					return err
				}
				if isStale {
					stale = append(stale, task)
				} else {
					closing = append(closing, task)
				}
				return nil
			}
		}
		e, err := serverExamine(tx, activeGrace, deliveryGrace, keep)
		if err != nil {
			return err
		}
		var plan reconcilePlan
		rep, plan, err = planReconcile(e)
		if err != nil || w == nil {
			return err
		}
		byTime := func(at func(taskRow) float64) func(a, b taskRow) int {
			return func(a, b taskRow) int {
				if c := cmp.Compare(at(a), at(b)); c != 0 {
					return c
				}
				return strings.Compare(a.ID, b.ID)
			}
		}
		// Each task's final row once, every event in order: a task timed
		// out and then closed is written with the close's row.
		var rows []serverstore.Row
		var events []serverstore.Event
		rowOf := map[string]int{}
		record := func(d decision) {
			row := serverstore.Row{}
			for _, v := range taskArgs(d.task) {
				row = append(row, v)
			}
			if i, ok := rowOf[d.task.ID]; ok {
				rows[i] = row
			} else {
				rowOf[d.task.ID] = len(rows)
				rows = append(rows, row)
			}
			if d.event.kind != "" {
				events = append(events, serverstore.Event{TaskID: d.task.ID, Kind: d.event.kind, From: d.event.from, To: d.event.to, OccurredAt: d.at, Code: d.event.code})
			}
		}
		slices.SortFunc(stale, byTime(func(t taskRow) float64 { return t.CreatedAt }))
		for _, task := range stale {
			d := decideReconcileTimeout(task, e.p)
			record(d)
			if d.task.DeliveryStatus == DeliveryPending && !(*d.task.EndedAt > e.p.deliveryCutoff) {
				closing = append(closing, d.task)
			}
		}
		slices.SortFunc(closing, byTime(func(t taskRow) float64 { return *t.EndedAt }))
		for _, task := range closing {
			record(decideReconcileClose(task, e.p))
		}
		if len(stale) != plan.timedOut || len(closing) != plan.closed {
			return internal("reconcile apply", errors.New("changed rows differ from the plan"))
		}
		if err := w.UpdateTasks(rows); err != nil {
			return err
		}
		return w.AddEvents(events)
	}
	var err error
	if dryRun {
		err = l.serverRead(ctx, func(tx serverstore.ReadTx) error { return run(tx, nil) })
	} else {
		if err := l.refuseMutation(ctx); err != nil {
			return ReconcileReport{}, err
		}
		err = l.serverWrite(ctx, func(tx serverstore.WriteTx) error { return run(tx, tx) })
	}
	if err != nil {
		return ReconcileReport{}, err
	}
	rep.DryRun = dryRun
	rep.Applied = !dryRun
	return rep, nil
}

// serverExamine counts the rows reconcile examines (examination) at the
// store's time, read after the transaction's locks; keep, when not nil,
// gets each row the plan changes: an active task it times out (stale
// true) or a pending delivery it closes.
func serverExamine(tx serverstore.ReadTx, activeGrace, deliveryGrace float64, keep func(stale bool, row serverstore.Row) error) (examination, error) {
	now, nowErr := checkedNow(tx.Now())
	e := examination{p: reconcileParams{now: now, staleBefore: now - activeGrace, deliveryCutoff: now - deliveryGrace}}
	// A damaged row outranks a clock that failed, as on SQLite: the
	// rows are checked either way.
	err := tx.ReconcileRows(func(active bool, row serverstore.Row) error {
		if !rowOK(row) {
			return errDamagedRow
		}
		if nowErr != nil {
			return nil
		}
		var changes, isStale bool
		if active {
			changes = e.active(row[2] == string(StatusQueued), row)
			isStale = changes
		} else {
			changes = e.pendingRow(row)
		}
		if changes && keep != nil {
			return keep(isStale, row)
		}
		return nil
	})
	if err != nil {
		return examination{}, err
	}
	if nowErr != nil {
		return examination{}, nowErr
	}
	return e, nil
}

// serverHistory is HistoryContext's read on a server: each event must
// stand somewhere in the chain its task's row implies (eventPosition),
// else the read is refused as on SQLite.
func (l *Ledger) serverHistory(ctx context.Context, id string) ([]Event, error) {
	out := []Event{}
	err := l.serverRead(ctx, func(tx serverstore.ReadTx) error {
		task, err := serverLoad(tx.Task(id))
		if err != nil {
			return err
		}
		events, err := tx.Events(id)
		if err != nil {
			return err
		}
		for _, ev := range events {
			if math.IsNaN(ev.OccurredAt) || math.IsInf(ev.OccurredAt, 0) {
				return errDamagedEvent
			}
			e := newEvent(EventKind(ev.Kind), ev.From, ev.To, ev.Code, ev.OccurredAt)
			if eventPosition(task, e) < 0 {
				return errDamagedEvent
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eventPosition is the place an event of task holds in the chain the
// task's row implies (spec 8.4), or -1 when no event of that task can be
// it: 0 its creation, then its start (when it started), its terminal
// transition (when it ended), its delivery's transition (when settled).
// The SQLite engine reads the same rule as SQL (eventPositionSQL), over
// values whose types a file does not fix.
func eventPosition(task taskRow, ev Event) int {
	started, ended := 0, 0
	left := string(StatusQueued) // the state a terminal transition left
	if task.StartedAt != nil {
		started, left = 1, string(StatusRunning)
	}
	if isTerminal(task.Status) {
		ended = 1
	}
	from := func(want string) bool { return ev.From != nil && *ev.From == want }
	sameCode := func(stored *string) bool {
		if ev.Code == nil || stored == nil {
			return ev.Code == nil && stored == nil
		}
		return *ev.Code == *stored
	}
	switch {
	case ev.Kind == EventCreated && ev.From == nil && ev.To == string(StatusQueued) &&
		ev.Code != nil && *ev.Code == codeCreated && ev.occurredSeconds == task.CreatedAt:
		return 0
	case ev.Kind == EventTaskTransition && from(string(StatusQueued)) && ev.To == string(StatusRunning) &&
		ev.Code != nil && *ev.Code == codeStarted && task.StartedAt != nil && ev.occurredSeconds == *task.StartedAt:
		return 1
	case ev.Kind == EventTaskTransition && from(left) &&
		task.EndedAt != nil && ev.occurredSeconds == *task.EndedAt && ev.To == string(task.Status) && ended == 1 && sameCode(task.TerminalCode):
		return 1 + started
	case ev.Kind == EventDeliveryTransition && from(string(DeliveryPending)) && ev.occurredSeconds == task.DeliveryUpdatedAt &&
		ev.To == string(task.DeliveryStatus) && task.DeliveryStatus != DeliveryPending && sameCode(task.DeliveryCode):
		return 1 + started + ended
	}
	return -1
}

// serverList is ListContext's read on a server, from the filter
// newListQuery validated: one row past the page says a next page exists.
func (l *Ledger) serverList(ctx context.Context, f ListFilter, q *listQuery) (ListPage, error) {
	updated, ended := f.cutoffs()
	sq := serverstore.ListQuery{UpdatedBefore: updated, EndedBefore: ended, ParentID: q.parentID, After: q.after, Rows: q.limit + 1}
	for _, s := range f.Statuses {
		sq.Statuses = append(sq.Statuses, string(s))
	}
	for _, s := range f.Deliveries {
		sq.Deliveries = append(sq.Deliveries, string(s))
	}
	page := ListPage{Tasks: []Task{}}
	err := l.serverRead(ctx, func(tx serverstore.ReadTx) error {
		rows, err := tx.List(sq)
		if err != nil {
			return err
		}
		for _, row := range rows {
			task, err := taskFromRow(row)
			if err != nil {
				return err
			}
			if len(page.Tasks) == q.limit {
				page.Next = page.Tasks[q.limit-1].ID
				break
			}
			page.Tasks = append(page.Tasks, task.public())
		}
		return nil
	})
	if err != nil {
		return ListPage{}, err
	}
	return page, nil
}
