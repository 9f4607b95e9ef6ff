// Package serverstore is the seam between package ledger and a ledger held
// by a database server (impl/ledger/postgres). The ledger keeps every rule:
// argument checks, the decisions, the row checks, the error classes. A
// store only keeps rows: it runs transactions, locks and reads rows, writes
// the rows and events the ledger decided, and tells the time. It knows no
// rule, so a store cannot decide differently from the SQLite engine.
//
// The package is internal to impl/ledger: only the ledger and its engine
// packages can name it, so only they can make a server ledger.
package serverstore

import (
	"context"
	"database/sql/driver"
	"errors"
)

// Row is one task row: the columns of the tasks table in the order
// id, parent_id, status, delivery_status, delivery_required, payload_hash,
// timeout_seconds, created_at, started_at, updated_at, ended_at,
// deadline_at, delivery_updated_at, terminal_code, delivery_code, version,
// each a string, int64, float64 or nil as database/sql drivers give them.
// The ledger checks a row read by a store with the same rules as a row
// read from its file.
type Row []driver.Value

// Event is one row of the event log; the store numbers it. Sequence is
// its number as read, or to keep (LoadEvents); an event
// appended (AddEvent) leaves it 0.
type Event struct {
	Sequence   int64
	TaskID     string
	Kind       string
	From       *string
	To         string
	OccurredAt float64
	Code       *string
}

// Store holds one ledger on a server.
type Store interface {
	// Write runs fn in one transaction that may write, and commits it
	// when fn answers nil. An error from fn rolls the transaction back
	// and is returned as it is.
	Write(ctx context.Context, fn func(WriteTx) error) error
	// Read runs fn in one read-only transaction over one snapshot.
	Read(ctx context.Context, fn func(ReadTx) error) error
	// Close ends the connection; it may be called again.
	Close() error
}

// ReadTx reads inside a transaction.
type ReadTx interface {
	// Task reads one task's row; found is false when there is none.
	Task(id string) (row Row, found bool, err error)
	// Children reads the rows whose parent is id, ordered by created_at,
	// then id by its bytes.
	Children(id string) ([]Row, error)
	// ReconcileRows hands each row reconcile examines to each: the
	// queued and running tasks (active true), and the terminal tasks
	// whose delivery is pending (active false), in any order.
	ReconcileRows(each func(active bool, row Row) error) error
	// List reads up to q.Rows rows that match q, by id in byte order.
	List(q ListQuery) ([]Row, error)
	// Events reads one task's events in the order they were appended.
	Events(taskID string) ([]Event, error)
	// Now is the operation's time, read after the transaction's locks
	// are held.
	Now() (float64, error)
	// DoctorTasks reads up to n task rows whose ids sort after *after
	// (from the first when after is nil), ordered by id in the store's
	// own order of ids, each with its parent (the doctor's pages).
	DoctorTasks(after *string, n int) ([]DoctorTask, error)
	// EventsByTask reads up to q.Rows events of q's range of task ids,
	// ordered by task_id in the order DoctorTasks orders ids, then in the
	// order they were appended (the doctor's pages).
	EventsByTask(q EventRange) ([]Event, error)
	// ParentCycles counts the cycles of the parent relation whose least
	// task, in the order DoctorTasks orders ids, is one of ids (the
	// doctor's pages: over every page, each cycle once).
	ParentCycles(ids []string) (int, error)
	// PruneRoots reads up to q.Rows rows without a parent whose delivery
	// is q.Delivery and whose ended_at is below q.Before and after the
	// position q gives, ordered by ended_at, then id by its bytes.
	PruneRoots(q PruneQuery) ([]Row, error)
	// Trees hands each the rows of the trees under roots (tasks without
	// a parent), tree by tree in the order of roots, each tree's root
	// first and every task before its children; root is the tree's index
	// in roots. An error of each ends the read and is returned as it is.
	Trees(roots []string, each func(root int, row Row) error) error
	// CountEvents counts the events of the tasks named.
	CountEvents(taskIDs []string) (int, error)
	// TasksAfter reads up to n task rows whose ids sort after the given
	// one by their bytes, in that order ("" reads from the first).
	TasksAfter(after string, n int) ([]Row, error)
	// EventsAfter reads up to n events whose sequence is above after,
	// by sequence.
	EventsAfter(after int64, n int) ([]Event, error)
	// Counts counts the tasks and the events.
	Counts() (tasks, events int, err error)
	// StorageCheck is the doctor's counterpart of SQLite's quick_check:
	// whether the storage holding the rows is sound as far as the server
	// can tell without reading them (see the engine's own definition).
	StorageCheck() (ok bool, err error)
}

// WriteTx reads and writes inside a write transaction. Every lock is held
// until the transaction ends.
type WriteTx interface {
	ReadTx
	// LockTask reads one task's row and keeps other writers from it.
	LockTask(id string) (row Row, found bool, err error)
	// ShareTask reads one task's row and keeps it from being changed or
	// deleted, while other transactions may still read and share it (a
	// parent while a child is created).
	ShareTask(id string) (row Row, found bool, err error)
	// ReserveID makes the creates of one id wait for each other, so a
	// second create of the id finds the first one's row.
	ReserveID(id string) error
	// LockTasks keeps every other writer from the tasks until the
	// transaction ends (reconcile and prune), while readers go on.
	LockTasks() error
	// InsertTask adds a task's row.
	InsertTask(row Row) error
	// UpdateTask writes every column of an existing task's row.
	UpdateTask(row Row) error
	// AddEvent appends one event.
	AddEvent(ev Event) error
	// UpdateTasks writes every column of existing tasks' rows, each id
	// at most once, in few statements (reconcile).
	UpdateTasks(rows []Row) error
	// AddEvents appends events in the order given, numbered in that
	// order, in few statements (reconcile).
	AddEvents(evs []Event) error
	// DeleteTasks removes the tasks named and all their events, and
	// answers how many of each it removed. No task left may name a
	// removed one as its parent.
	DeleteTasks(taskIDs []string) (tasks, events int, err error)
	// LoadTasks adds the rows next hands out until it answers false, in
	// one statement (the foreign keys are checked once all are in), and
	// answers how many it added. An error of next is returned as it is.
	LoadTasks(next func() (Row, bool, error)) (int, error)
	// LoadEvents adds the events next hands out, each with its own
	// Sequence, as LoadTasks adds tasks; events appended later are
	// numbered above every sequence loaded.
	LoadEvents(next func() (Event, bool, error)) (int, error)
}

// PruneQuery selects the next candidate roots of a prune in one
// delivery state. With AfterEnded nil the read starts at the first row;
// otherwise it starts after (AfterEnded, AfterID).
type PruneQuery struct {
	Delivery   string
	Before     float64
	AfterEnded *float64
	AfterID    string
	Rows       int
}

// DoctorTask is a task row as the doctor reads it, with its parent:
// whether a task with the row's parent_id exists, and that task's
// created_at.
type DoctorTask struct {
	Row           Row
	ParentFound   bool
	ParentCreated driver.Value
}

// EventRange selects the events whose task_id sorts above *Above (from
// the first when nil) and not above *Through (to the last when nil),
// resuming after the event (AfterTask, AfterSequence) when AfterSequence
// is above 0.
type EventRange struct {
	Above, Through *string
	AfterTask      string
	AfterSequence  int64
	Rows           int
}

// ListQuery is a validated list filter (the ledger checked every value);
// a field left empty or nil does not filter.
type ListQuery struct {
	Statuses, Deliveries       []string
	UpdatedBefore, EndedBefore *float64 // updated_at < value, ended_at < value
	ParentID                   string
	After                      string // ids that sort after it by their bytes
	Rows                       int
}

// Settings are what the ledger resolved from its Options for a store.
type Settings struct {
	// BusyTimeoutMS bounds every wait for a lock or a statement.
	BusyTimeoutMS int
	// ReadOnly: the store must not create or change anything, the schema
	// included.
	ReadOnly bool
	// MustExist: the store must not make the ledger's schema when the
	// database has none.
	MustExist bool
}

// The failures a store answers besides an error of fn and a context's
// error (returned as errors.Is(err, ctx.Err()) holds). Their texts name
// nothing of the server; the ledger maps them onto its classes.
var (
	// ErrBusy: a lock or statement waited longer than the busy timeout.
	ErrBusy = errors.New("serverstore: busy")
	// ErrSchemaMismatch: the schema in the database is not the ledger's.
	ErrSchemaMismatch = errors.New("serverstore: schema does not match")
	// ErrNoLedger: the database holds no ledger, and the store may not
	// make one (read-only, or the caller wants an existing ledger).
	ErrNoLedger = errors.New("serverstore: database holds no ledger")
	// ErrInvalidURL: the connection text could not be read.
	ErrInvalidURL = errors.New("serverstore: connection text is not valid")
	// ErrUnreachable: no connection to the server could be made (no
	// server listening, the host or network unreachable, a connect
	// timeout), or a lost one could not be made again.
	ErrUnreachable = errors.New("serverstore: server cannot be reached")
	// ErrLoginRefused: the server refused the login (a wrong or missing
	// password, an unknown role, no rule admitting the client).
	ErrLoginRefused = errors.New("serverstore: server refused the login")
	// ErrForeignOwner: the ledger's schema, or a relation in it, belongs
	// to another role than the connecting one.
	ErrForeignOwner = errors.New("serverstore: schema is owned by another role")
	// ErrGranted: something in the ledger's schema, or the schema, is
	// granted to another role or to PUBLIC.
	ErrGranted = errors.New("serverstore: schema is granted to another role")
)

// Fault is any other failure of the server or the connection. Code is the
// server's SQLSTATE, or "" when the connection failed; the driver's own
// text, which names the host, the user and the database, is never kept.
type Fault struct {
	Op   string
	Code string
}

func (f *Fault) Error() string {
	if f.Code == "" {
		return "serverstore: " + f.Op + ": connection failed"
	}
	return "serverstore: " + f.Op + ": server answered " + f.Code
}
