package ledger

import (
	"math"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"

	"github.com/stateguard/stateguard/impl/ledger/internal/ledgererr"
	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// Error classes. Every error an operation returns wraps exactly one of these
// (errors.Is), and its message never contains an input value, id or path.
var (
	ErrInvalidInput  = ledgererr.ErrInvalidInput
	ErrTaskNotFound  = ledgererr.ErrTaskNotFound
	ErrStateConflict = ledgererr.ErrStateConflict
)

// Status is a task's state: queued, then running, then one of the four
// terminal states.
type Status string

// Task states.
const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
	StatusTimedOut  Status = "timed_out"
	StatusCancelled Status = "cancelled"
)

// DeliveryStatus is the state of a task's delivery: pending until it is
// settled once as delivered, failed or not_applicable.
type DeliveryStatus string

// Delivery states.
const (
	DeliveryPending       DeliveryStatus = "pending"
	DeliveryDelivered     DeliveryStatus = "delivered"
	DeliveryFailed        DeliveryStatus = "failed"
	DeliveryNotApplicable DeliveryStatus = "not_applicable"
)

// Task is one row of the tasks table. Its times are the stored float Unix
// seconds to the nearest nanosecond, in UTC; one beyond what a Time holds
// (only the command line's float clock can store such a time) reads as
// the nearest instant a Time holds, ±2^62 s. MarshalJSON writes each time
// as stored while the field still holds what was read. Optional columns
// are nil pointers when NULL; a code column that is NULL is NoCode (a
// stored code is never empty: only registered codes are).
type Task struct {
	ID               string
	ParentID         *string
	Status           Status
	DeliveryStatus   DeliveryStatus
	DeliveryRequired bool
	PayloadHash      *string // never printed (privacy contract): MarshalJSON writes has_payload_hash
	// Timeout is the span from the start to the deadline: the stored
	// float seconds to the nearest nanosecond. One longer than a
	// Duration holds (only the command line can store such a timeout)
	// reads as the longest Duration; MarshalJSON still writes it exactly.
	Timeout           *time.Duration
	CreatedAt         time.Time
	StartedAt         *time.Time
	UpdatedAt         time.Time
	EndedAt           *time.Time
	DeadlineAt        *time.Time
	DeliveryUpdatedAt time.Time
	TerminalCode      Code // the code the task was closed with
	DeliveryCode      Code // the code its delivery was settled with
	Version           int64

	// stored is the row the task was read from, whose floats MarshalJSON
	// writes where a field still holds what was read.
	stored *taskRow
}

// taskRow is a task as the engines read, decide and write it: the
// columns as stored, NULL as nil.
type taskRow struct {
	ID                string
	ParentID          *string
	Status            Status
	DeliveryStatus    DeliveryStatus
	DeliveryRequired  bool
	PayloadHash       *string
	TimeoutSeconds    *float64
	CreatedAt         float64
	StartedAt         *float64
	UpdatedAt         float64
	EndedAt           *float64
	DeadlineAt        *float64
	DeliveryUpdatedAt float64
	TerminalCode      *string
	DeliveryCode      *string
	Version           int64
}

// public is the row as the API hands it out.
func (r taskRow) public() Task {
	return Task{
		ID: r.ID, ParentID: r.ParentID, Status: r.Status, DeliveryStatus: r.DeliveryStatus,
		DeliveryRequired: r.DeliveryRequired, PayloadHash: r.PayloadHash, Timeout: spanOf(r.TimeoutSeconds),
		CreatedAt: instantOf(r.CreatedAt), StartedAt: optInstant(r.StartedAt), UpdatedAt: instantOf(r.UpdatedAt),
		EndedAt: optInstant(r.EndedAt), DeadlineAt: optInstant(r.DeadlineAt), DeliveryUpdatedAt: instantOf(r.DeliveryUpdatedAt),
		TerminalCode: codeOf(r.TerminalCode), DeliveryCode: codeOf(r.DeliveryCode), Version: r.Version,
		stored: &r,
	}
}

// spanOf reads a nullable span column: the nearest Duration, the longest
// one for a span beyond it.
func spanOf(seconds *float64) *time.Duration {
	if seconds == nil {
		return nil
	}
	d := durationOf(*seconds)
	return &d
}

// durationOf is a stored, finite, non-negative span as the nearest
// Duration, or the longest Duration when it is longer.
func durationOf(seconds float64) time.Duration {
	d, ok := floatseconds.Duration(seconds)
	if !ok {
		return time.Duration(math.MaxInt64)
	}
	return d
}

// Instants a Time holds no nearer: the limits of floatseconds.Time.
var (
	latestInstant   = time.Unix(1<<62, 0).UTC()
	earliestInstant = time.Unix(-1<<62, 0).UTC()
)

// instantOf is a stored, finite time in Unix seconds as the nearest Time,
// or the nearer limit when it lies beyond them.
func instantOf(seconds float64) time.Time {
	t, ok := floatseconds.Time(seconds)
	switch {
	case ok:
		return t
	case seconds > 0:
		return latestInstant
	default:
		return earliestInstant
	}
}

// optInstant reads a nullable time column.
func optInstant(seconds *float64) *time.Time {
	if seconds == nil {
		return nil
	}
	t := instantOf(*seconds)
	return &t
}

// publicTask converts an operation's answer.
func publicTask(r taskRow, err error) (Task, error) {
	if err != nil {
		return Task{}, err
	}
	return r.public(), nil
}

// codeOf reads a nullable code column.
func codeOf(s *string) Code {
	if s == nil {
		return NoCode
	}
	return Code(*s)
}

// Clock returns the current time. It is read inside each write
// transaction; tests and the demo inject a fixed or scripted clock. The
// ledger stores the float nearest to the instant in Unix seconds
// (Options.SetClockSeconds hands over the float itself).
type Clock func() time.Time

// Options configure Open.
type Options struct {
	// ReadOnly opens without creating, migrating or tightening anything;
	// every mutation fails with ErrStateConflict.
	ReadOnly bool
	// MustExist makes a writable Open refuse a database that does not exist
	// (ErrInvalidInput) instead of creating it and its directories, so a
	// mistyped path cannot silently start an empty ledger. The CLI sets it
	// for every command but init and create (divergence L7).
	MustExist bool
	// AllowExternalACL is the Windows acknowledgement (certifies nothing).
	AllowExternalACL bool
	// BusyTimeout bounds the wait for another connection's lock before an
	// operation fails with ErrBusy; zero means 5 s. SQLite counts it in
	// whole milliseconds: a fraction is rounded up.
	BusyTimeout time.Duration
	// Clock defaults to the wall clock when nil.
	Clock Clock
	// NewID returns the id of a task created without one; it defaults to a
	// random version-4 UUID. Tests inject a deterministic source. The value
	// must be a canonical lowercase UUID.
	NewID func() (string, error)

	// clockSeconds is the clock in the stored form, set by
	// SetClockSeconds; it takes the place of Clock.
	clockSeconds func() float64

	// fresh makes Open's storage step create a new file and refuse one
	// that exists (Backup's target).
	fresh bool
}

// CreateParams are the arguments of Create. Empty strings mean "not given".
// TaskID and ParentID accept every UUID spelling ParseTaskID accepts.
type CreateParams struct {
	TaskID      string
	ParentID    string
	PayloadHash string
	// Timeout, when set, gives the task a deadline this long after its
	// start; a negative one is ErrInvalidInput.
	Timeout *time.Duration
	// Internal marks a task whose result is delivered to no one: its
	// delivery can only end as not_applicable (through SetDelivery or
	// Reconcile). The zero value is a delivery-required task, the command
	// line's default; --internal sets this.
	Internal bool

	// timeoutSeconds is the timeout in the stored form: the command
	// line's seconds, or Timeout's nearest float once create has read it.
	timeoutSeconds *float64
}

// ReconcileReport holds counts only, never ids.
type ReconcileReport struct {
	ActiveExamined          int
	TasksTimedOut           int
	FreshActiveRetained     int
	PendingDeliveryExamined int
	DeliveriesFailed        int
	DeliveriesNotApplicable int
	PendingDeliveryRetained int
	DryRun                  bool
	Applied                 bool
}

// DoctorReport holds counts only, never ids. Map keys of the two status
// count maps are always all six task states and all four delivery states.
type DoctorReport struct {
	Healthy bool
	// QuickCheckOK: the storage's own check passed: SQLite's PRAGMA
	// quick_check of the file's pages; on a server, which has no such
	// check of its pages, the schema, its owner and grants, triggers and
	// indexes (spec 20). JSON and the CLI write it as "quick_check":
	// "ok" or "failed".
	QuickCheckOK                bool
	SchemaVersion               int
	SchemaOK                    bool
	TaskCount                   int
	EventCount                  int
	TaskStatusCounts            map[Status]int
	DeliveryStatusCounts        map[DeliveryStatus]int
	OrphanCount                 int
	ParentCycleCount            int
	ForeignKeyErrorCount        int
	StateInconsistencyCount     int
	TimestampInconsistencyCount int
	EventInconsistencyCount     int
	DoctorErrorCount            int
}

// StorageInfo describes the verified connection settings (the CLI's init
// output).
type StorageInfo struct {
	BusyTimeoutMS   int
	ForeignKeys     bool
	JournalMode     string // "wal"
	PermissionModel string // "posix_mode" or "external_acl"; "schema_owner" on a server
	// Engine is "" for a ledger in a file and EnginePostgreSQL for one
	// held by a PostgreSQL server.
	Engine string
}

// EnginePostgreSQL is StorageInfo.Engine of a ledger held by PostgreSQL.
const EnginePostgreSQL = "postgresql"

// storage is what the storage guard reads of the options.
func (o Options) storage() storageguard.Options {
	return storageguard.Options{ReadOnly: o.ReadOnly, MustExist: o.MustExist, AllowExternalACL: o.AllowExternalACL, Fresh: o.fresh}
}
