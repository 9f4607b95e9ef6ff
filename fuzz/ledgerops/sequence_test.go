package ledgerops

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/dbdigest"
	"github.com/stateguard/stateguard/fuzz/internal/fuzzbytes"
	"github.com/stateguard/stateguard/impl/ledger"
	model "github.com/stateguard/stateguard/model/ledger"
)

func poolID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0xf0220000+n, n) }

// spell writes a canonical id in one of the spellings the ledger accepts,
// or (case 5) a malformed one both sides refuse.
func spell(id string, how int) string {
	switch how {
	case 1:
		return strings.ToUpper(id)
	case 2:
		return strings.ReplaceAll(id, "-", "")
	case 3:
		return "{" + id + "}"
	case 4:
		return "urn:uuid:" + id
	case 5:
		return id[:35]
	}
	return id
}

var (
	seqTimeouts = []float64{0, 0.5, 30, 600, 1e10, 1e308, -1, math.NaN(), math.Inf(1)}
	seqGraces   = []float64{0, 0.25, 30, 600, 1e10, -1, math.NaN(), math.Inf(1)}
	seqHashes   = []string{"", strings.Repeat("ab", 32), "not-a-hash", strings.Repeat("AB", 32)}
	seqCodes    = []string{"", "completed", "worker_completed", "worker_failed", "deadline_exceeded", "restart_stale",
		"caller_cancelled", "transport_acknowledged", "delivery_grace_expired", "transport_failed", "internal_task",
		"created", "started", "bogus_code", "Bad Code"}
	seqTaskStates     = []string{"succeeded", "failed", "timed_out", "cancelled", "queued", "running", "bogus"}
	seqDeliveryStates = []string{"delivered", "failed", "not_applicable", "pending", "bogus"}
)

// sequenceSeeds are the programs every sequence target starts from.
var sequenceSeeds = []string{
	"", "\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00\x02\x00\x00\x00\x02\x00\x00\x00\x07\x00\x00",
	"\x00\x02\x01\x00\x01\x00\x01\x03\x01\x03\x00\x05\x02\x01\x00\x00\x00\x00\x00\x07\x03\x04\x00\x00",
	"\x00\x00\x00\x00\x00\x00\x01\x00\x01\x05\x01\x00\x00\x07\x03\x03\x00\x07\x01\x01\x00\x07\x00",
	"\x00\x00\x00\x00\x03\x00\x01\x00\x01\x09\x04\x00\x00\x00\x02\x00\x08\x00\x02\x00",
	strings.Repeat("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09", 8),
	// create, start, heartbeat, close, deliver; a child; a task whose
	// deadline the clock lands on; reconcile; the clock steps back.
	"\x00\x00\x01\x00\x00\x01\x00\x01\x02\x01" + "\x05\x02\x02\x00\x00" + "\x05\x01\x03\x00\x01" +
		"\x00\x04\x00\x00\x00\x01" + "\x00\x05\x00\x02\x00\x07" + "\x00\x01\x01\x01\x03\x00\x00\x04\x01\x00\x00" +
		"\x00\x00\x01\x02\x00\x01\x00\x01\x01\x01" + "\x00\x02\x02\x00" + "\x09\x02\x08\x02\x00\x00" +
		"\x07\x01\x02\x01\x00" + "\x06\x04\x08\x00\x00\x00" + "\x00\x07\x00\x00" + "\x00\x06\x02\x03",
	// a start at the top of the float range with a huge timeout
	"\x00\x00\x01\x03\x00\x01\x00\x01\x05\x01" + "\x08\x00\x02\x03\x00",
	// create; start and a heartbeat, each 30 s later; a heartbeat with
	// the clock 0.5 s back, after the start (refused; with the refusal
	// removed, no mutation reached this in thousands of executions)
	"\x00\x00\x01\x00\x00\x01\x00\x00\x01" + "\x05\x02\x02\x00\x00" + "\x05\x02\x03\x00\x00" + "\x07\x00\x03\x00\x00",
	// tasks 0 and 1 created; 0 started; each closed as cancelled by
	// its caller 30 s apart, 0 running and 1 still queued; a get (no
	// other seed cancelled a task, so a doctor not counting cancelled
	// tasks went unseen in seconds of fuzzing)
	"\x00\x00\x01\x00\x00\x01\x00\x00\x01" + "\x00\x00\x01\x01\x00\x01\x00\x00\x01" +
		"\x05\x02\x02\x00\x00" + "\x05\x02\x04\x00\x00\x03\x06" + "\x05\x02\x04\x01\x00\x03\x06" +
		"\x00\x06\x01\x00",
}

// FuzzLedgerSequence decodes the input into up to 20 ledger operations
// (create with any id spelling, parent, hash, timeout and kind; start;
// heartbeat; close and delivery with any word and code; get; children;
// reconcile with any graces, dry or applied) under a scripted clock that
// moves forward, stalls, steps back, jumps to the top of the float range or
// lands on a task's deadline. Each runs on the real ledger and on the
// model. Oracle after every step: same error class and returned rows; the
// ledger's task and event rows equal the model's; the model's checker finds
// them healthy; the doctor is healthy and its counts equal the checker's.
func FuzzLedgerSequence(f *testing.F) {
	for _, s := range sequenceSeeds {
		f.Add([]byte(s))
	}
	empty := emptyLedger(f)
	states := stateMemo{}
	f.Fuzz(func(t *testing.T, data []byte) {
		seq := newSequence(t, data)
		path := privateDB(t, empty)
		l, err := ledger.Open(path, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows, NewID: seq.newID}, seq.clock))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		// A second SQLite connection reads the rows (never os.Open: that
		// would drop SQLite's POSIX locks).
		reader, err := sql.Open("sqlite", roURI(path))
		if err != nil {
			t.Fatal(err)
		}
		reader.SetMaxOpenConns(2)
		defer reader.Close()
		// One pinned connection of the reader watches for commits (its
		// data_version changes with every commit of another connection).
		watch, err := reader.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer watch.Close()
		last := checkedState{version: -1}
		seq.run(l, func() {
			checkAgainstModel(t, l, reader, watch, &last, seq.m, states.of(data), seq.fail)
		})
	})
}

// sequence is one input's program, run on a ledger and on the model side
// by side under the clock the program moves.
type sequence struct {
	t         *testing.T
	in        *fuzzbytes.Stream
	m         *model.Model
	now       float64
	generated int // ids drawn by NewID
	log       []string
}

func newSequence(t *testing.T, data []byte) *sequence {
	return &sequence{t: t, in: fuzzbytes.New(data), m: &model.Model{}, now: 1.7e9}
}

// clock is the ledger's clock: the program's.
func (s *sequence) clock() float64 { return s.now }

// newID draws the ids of tasks created without one.
func (s *sequence) newID() (string, error) {
	s.generated++
	return poolID(100 + s.generated), nil
}

// fail stops the input with the operations so far.
func (s *sequence) fail(format string, a ...any) {
	s.t.Helper()
	s.t.Fatalf("%s\noperations:\n  %s", fmt.Sprintf(format, a...), strings.Join(s.log, "\n  "))
}

// run decodes up to 20 steps, each a move of the clock and one operation
// on l and the model whose answers must agree, and calls check after
// each.
func (s *sequence) run(l *ledger.Ledger, check func()) {
	in, m, fail := s.in, s.m, s.fail
	target := func() (string, string) {
		id := poolID(in.Intn(6))
		arg := spell(id, in.Intn(6))
		if len(arg) == 35 {
			return arg, arg // malformed: both refuse it
		}
		return arg, id
	}
	compare := func(op string, got ledger.Task, gerr error, want model.Task, werr error) {
		if classOf(gerr) != classOf(werr) {
			fail("%s: ledger %s (%v), model %s (%v)", op, classOf(gerr), gerr, classOf(werr), werr)
		}
		if gerr == nil && !reflect.DeepEqual(toModel(got), want) {
			fail("%s: task differs\nledger %s\nmodel  %s", op, showTask(toModel(got)), showTask(want))
		}
	}
	for step := 0; step < 20 && !in.Done(); step++ {
		switch c := in.Intn(10); {
		case c < 5:
		case c < 7:
			s.now += fuzzbytes.Pick(in, []float64{0.001, 0.5, 30, 600, 1e5})
		case c == 7:
			s.now -= fuzzbytes.Pick(in, []float64{0.5, 100})
		case c == 8:
			s.now = math.Max(s.now, fuzzbytes.Pick(in, []float64{1.7e308, math.MaxFloat64}))
		default:
			if tasks := m.Tasks(); len(tasks) > 0 {
				task := fuzzbytes.Pick(in, tasks)
				if task.DeadlineAt != nil && !math.IsInf(*task.DeadlineAt, 0) {
					s.now = *task.DeadlineAt
				} else {
					s.now = task.UpdatedAt + 600
				}
			}
		}
		switch in.Intn(9) {
		case 0, 1:
			var p ledger.CreateParams
			var mp model.CreateParams
			if in.Intn(4) > 0 {
				p.TaskID, mp.TaskID = target()
			}
			if in.Intn(3) == 0 {
				p.ParentID, mp.ParentID = target()
			}
			p.PayloadHash = fuzzbytes.Pick(in, seqHashes)
			mp.PayloadHash = p.PayloadHash
			if in.Bool() {
				v := fuzzbytes.Pick(in, seqTimeouts)
				p.SetTimeoutSeconds(v)
				mp.TimeoutSeconds = &v
			}
			p.Internal = in.Intn(4) == 0
			mp.DeliveryRequired = !p.Internal
			s.log = append(s.log, fmt.Sprintf("@%v create %+v timeout=%v", s.now, p, deref(mp.TimeoutSeconds)))
			before := s.generated
			got, gerr := l.Create(p)
			if p.TaskID == "" {
				mp.TaskID = poolID(100 + s.generated)
				if s.generated == before {
					mp.TaskID = poolID(10000 + step) // refused before an id was drawn
				}
			}
			want, werr := m.Create(mp, s.now)
			compare("create", got, gerr, want, werr)
		case 2:
			arg, id := target()
			s.log = append(s.log, fmt.Sprintf("@%v start %s", s.now, arg))
			got, gerr := l.Start(arg)
			want, werr := m.Start(id, s.now)
			compare("start", got, gerr, want, werr)
		case 3:
			arg, id := target()
			s.log = append(s.log, fmt.Sprintf("@%v heartbeat %s", s.now, arg))
			got, gerr := l.Heartbeat(arg)
			want, werr := m.Heartbeat(id, s.now)
			compare("heartbeat", got, gerr, want, werr)
		case 4:
			arg, id := target()
			status, code := fuzzbytes.Pick(in, seqTaskStates), fuzzbytes.Pick(in, seqCodes)
			s.log = append(s.log, fmt.Sprintf("@%v close %s %s %q", s.now, arg, status, code))
			got, gerr := l.CloseTask(arg, ledger.Status(status), ledger.Code(code))
			want, werr := m.Close(id, status, code, s.now)
			compare("close", got, gerr, want, werr)
		case 5:
			arg, id := target()
			status, code := fuzzbytes.Pick(in, seqDeliveryStates), fuzzbytes.Pick(in, seqCodes)
			s.log = append(s.log, fmt.Sprintf("@%v delivery %s %s %q", s.now, arg, status, code))
			got, gerr := l.SetDelivery(arg, ledger.DeliveryStatus(status), ledger.Code(code))
			want, werr := m.SetDelivery(id, status, code, s.now)
			compare("delivery", got, gerr, want, werr)
		case 6:
			arg, id := target()
			s.log = append(s.log, fmt.Sprintf("get %s", arg))
			got, gerr := l.Get(arg)
			want, werr := m.Get(id)
			compare("get", got, gerr, want, werr)
		case 7:
			arg, id := target()
			s.log = append(s.log, fmt.Sprintf("children %s", arg))
			got, gerr := l.ChildrenOf(arg)
			want, werr := m.ChildrenOf(id)
			if classOf(gerr) != classOf(werr) || len(got) != len(want) {
				fail("children: ledger %s %d rows, model %s %d rows", classOf(gerr), len(got), classOf(werr), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(toModel(got[i]), want[i]) {
					fail("child %d differs\nledger %s\nmodel  %s", i, showTask(toModel(got[i])), showTask(want[i]))
				}
			}
		default:
			active, delivery, dry := fuzzbytes.Pick(in, seqGraces), fuzzbytes.Pick(in, seqGraces), in.Bool()
			s.log = append(s.log, fmt.Sprintf("@%v reconcile active=%v delivery=%v dry=%v", s.now, active, delivery, dry))
			got, gerr := ledgerrows.ReconcileSeconds(context.Background(), l, active, delivery, dry)
			want, werr := m.Reconcile(s.now, active, delivery, dry)
			if classOf(gerr) != classOf(werr) || gerr == nil && fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
				fail("reconcile: ledger %s %+v, model %s %+v", classOf(gerr), got, classOf(werr), want)
			}
		}
		check()
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkedState is what checkAgainstModel last checked in full.
type checkedState struct {
	version int64 // the watch connection's data_version then (-1: never)
	tasks   []model.Task
	events  []model.Event
}

// stateMemo holds, by a digest of the database's bytes, the rows and the
// doctor's report of a database that passed checkAgainstModel, and the
// input that made it. Rows and doctor read nothing but the database, so
// on the same bytes they answer the same; inputs share many states (a
// mutation keeps the operations before the byte it changed), and the
// doctor and the row reads were most of an input's time.
type stateMemo map[[sha256.Size]byte]*rememberedState

type rememberedState struct {
	input  [sha256.Size]byte // a digest of the input that left the state
	tasks  []model.Task
	events []model.Event
	doc    ledger.DoctorReport
}

// stateMemoLimit bounds the states kept (all are forgotten when full).
const stateMemoLimit = 1 << 12

// inputStates is one input's view of the memo.
type inputStates struct {
	memo  stateMemo
	input [sha256.Size]byte
}

func (m stateMemo) of(input []byte) inputStates { return inputStates{m, sha256.Sum256(input)} }

// recall returns what was remembered of the database whose bytes have
// the given digest when another input left the same bytes, else nil. The
// same input again gets nil, so that it reads and runs the doctor again
// and its coverage is the same as the first time (the toolchain runs an
// input that found new coverage once more before it keeps it).
func (s inputStates) recall(key [sha256.Size]byte) *rememberedState {
	if r, ok := s.memo[key]; ok && r.input != s.input {
		return r
	}
	return nil
}

// remember keeps a state that passed.
func (s inputStates) remember(key [sha256.Size]byte, r rememberedState) {
	if _, ok := s.memo[key]; ok {
		return
	}
	if len(s.memo) >= stateMemoLimit {
		clear(s.memo)
	}
	r.input = s.input
	s.memo[key] = &r
}

// checkAgainstModel compares every task and event row with the model's,
// runs the checker over the ledger's rows, and compares the doctor with it.
// The watch connection's data_version changes with every commit of another
// connection. While it is the one *last holds and the model's rows are the
// ones *last holds, the database and the model are both what the last
// full check found equal and healthy, so the check returns at once. The
// doctor reads nothing but the database (no clock), so it runs only when
// the database changed, and not at all when another input left the same
// database bytes before (the rows and the report of then stand in). Most
// steps are refused or read-only, and the doctor and the row reads were
// most of an input's time.
func checkAgainstModel(t *testing.T, l *ledger.Ledger, reader *sql.DB, watch *sql.Conn, last *checkedState, m *model.Model, states inputStates, fail func(string, ...any)) {
	t.Helper()
	var version int64
	if err := watch.QueryRowContext(context.Background(), "PRAGMA data_version").Scan(&version); err != nil {
		fail("data_version: %v", err)
	}
	wantTasks, wantEvents := m.Tasks(), m.Events()
	if version == last.version && reflect.DeepEqual(wantTasks, last.tasks) && reflect.DeepEqual(wantEvents, last.events) {
		return
	}
	var key [sha256.Size]byte
	var seen *rememberedState
	if version != last.version {
		var err error
		if key, err = dbdigest.Of(watch); err != nil {
			fail("serialize: %v", err)
		}
		seen = states.recall(key)
	}
	var tasks []model.Task
	var events []model.Event
	if seen != nil {
		tasks, events = seen.tasks, seen.events
	} else {
		var err error
		if tasks, events, err = readRows(reader); err != nil {
			fail("read rows: %v", err)
		}
	}
	if len(tasks) != len(wantTasks) {
		fail("ledger has %d tasks, model %d", len(tasks), len(wantTasks))
	}
	for i := range tasks {
		if !reflect.DeepEqual(tasks[i], wantTasks[i]) {
			fail("row %d differs\nledger %s\nmodel  %s", i, showTask(tasks[i]), showTask(wantTasks[i]))
		}
	}
	if !reflect.DeepEqual(events, wantEvents) {
		fail("events differ\nledger %+v\nmodel  %+v", events, wantEvents)
	}
	counts := model.Check(tasks, events)
	if !counts.Healthy() {
		fail("the checker finds the ledger's rows unhealthy: %+v", counts)
	}
	if version != last.version {
		var doc ledger.DoctorReport
		if seen != nil {
			doc = seen.doc
		} else {
			var err error
			if doc, err = l.Doctor(); err != nil {
				fail("doctor: %v", err)
			}
		}
		if !doc.Healthy || !doc.QuickCheckOK || !doc.SchemaOK || doc.DoctorErrorCount != 0 || !sameCounts(doc, counts) {
			fail("doctor %+v (remembered: %v)\nchecker %+v", doc, seen != nil, counts)
		}
		if seen == nil {
			states.remember(key, rememberedState{tasks: tasks, events: events, doc: doc})
		}
	}
	*last = checkedState{version, wantTasks, wantEvents}
}
