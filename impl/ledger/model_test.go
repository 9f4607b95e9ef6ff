package ledger_test

// Model-vs-implementation state-machine test: the real SQLite ledger and the
// executable model (model/ledger) receive the same random operations; after
// every step the returned task, the error class, every task and event row,
// the doctor's report and the model's Checker must agree.
//
// Default: 50 rapid checks (set in the test unless -rapid.checks is given). More: go test ./impl/ledger -run TestLedgerMatchesModel -rapid.checks=2000
// A failure prints the op log (one line per step) and rapid's replay hint.

import (
	"context"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"

	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	model "github.com/stateguard/stateguard/model/ledger"
)

// scriptedClock is the injected clock: the test sets now before each step.
type scriptedClock struct{ now float64 }

func (c *scriptedClock) read() float64 { return c.now }

// idPool names a fixed set of canonical ids so that creates, lookups and
// parents collide often.
func poolID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x5eed0000+n, n) }

// spell writes a canonical id in one of the spellings the ledger accepts.
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
	}
	return id
}

// malformedIDs are refused by the ledger (L3) and are not canonical for the
// model, so both answer InvalidInput.
var malformedIDs = []string{"not-a-uuid", " " + poolID(1), "0x" + strings.ReplaceAll(poolID(1), "-", "")[2:], poolID(1)[:35], "+" + poolID(1)[1:]}

var anyCodes = []string{"", "completed", "worker_completed", "worker_failed", "deadline_exceeded", "restart_stale",
	"caller_cancelled", "transport_acknowledged", "delivery_grace_expired", "transport_failed", "internal_task",
	"created", "started", "bogus_code", "Bad Code", "-x"}

var hashes = []string{"", "", strings.Repeat("ab", 32), strings.Repeat("0f", 32), "not-a-hash", strings.Repeat("AB", 32)}

// show prints a row with pointers dereferenced.
func show(t model.Task) string {
	f := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("{%s parent=%s %s/%s req=%v hash=%s timeout=%s created=%v started=%s updated=%v ended=%s deadline=%s dupd=%v code=%s dcode=%s v=%d}",
		t.ID, s(t.ParentID), t.Status, t.DeliveryStatus, t.DeliveryRequired, s(t.PayloadHash), f(t.TimeoutSeconds),
		t.CreatedAt, f(t.StartedAt), t.UpdatedAt, f(t.EndedAt), f(t.DeadlineAt), t.DeliveryUpdatedAt, s(t.TerminalCode), s(t.DeliveryCode), t.Version)
}

// readRows, toModel and classOf bring the ledger's stored rows, returned rows and errors
// into the model's terms.
var (
	readRows = ledgerrows.Read
	toModel  = ledgerrows.FromLedger
	classOf  = ledgerrows.Class
)

// machine is the rapid state machine: the real ledger, the model, and the
// clock both read.
type machine struct {
	l       *ledger.Ledger
	reader  *sql.DB
	clock   *scriptedClock
	m       *model.Model
	created []string // canonical ids known to exist
	nextGen int      // counter behind Options.NewID
	step    int
}

func newMachine(t *rapid.T, dir string) *machine {
	mc := &machine{clock: &scriptedClock{now: 1.7e9}, m: &model.Model{}}
	path := filepath.Join(dir, "ledger.sqlite")
	l, err := ledger.Open(path, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows, NewID: func() (string, error) {
		mc.nextGen++
		return poolID(1000 + mc.nextGen), nil
	}}, mc.clock.read))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	mc.l = l
	// A second SQLite connection (never os.Open: that would drop SQLite's
	// POSIX locks) reads the rows after each step.
	mc.reader, err = sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	mc.reader.SetMaxOpenConns(1)
	return mc
}

func (mc *machine) close(t *rapid.T) {
	if err := mc.reader.Close(); err != nil {
		t.Errorf("reader close: %v", err)
	}
	if err := mc.l.Close(); err != nil {
		t.Errorf("ledger close: %v", err)
	}
}

// tick moves the clock: mostly forward, sometimes not at all, sometimes
// back, and rarely (4%) to the top of the float range, where now + a
// 1e308 timeout overflows: a start there must be refused, not write an
// infinite deadline. A run reaches that start about once in 130 cases;
// TestStartDeadlineOverflow pins it deterministically.
func (mc *machine) tick(t *rapid.T) {
	// Steps equal to the timeouts and graces below make deadlines and grace
	// limits land exactly on now, where <= and < differ.
	switch kind := rapid.IntRange(0, 49).Draw(t, "clockKind"); {
	case kind < 5:
		mc.clock.now -= rapid.SampledFrom([]float64{0.5, 1, 100, 700}).Draw(t, "back")
	case kind < 15:
	case kind >= 48:
		mc.clock.now = max(mc.clock.now, rapid.SampledFrom([]float64{1.7e308, math.MaxFloat64}).Draw(t, "huge"))
	default:
		mc.clock.now += rapid.SampledFrom([]float64{0.001, 0.25, 0.5, 30, 599.5, 600, 700, 1e5}).Draw(t, "forward")
	}
}

// target draws an id argument: (what the ledger gets, what the model gets).
func (mc *machine) target(t *rapid.T, label string) (string, string) {
	kind := rapid.IntRange(0, 15).Draw(t, label+"Kind")
	var id string
	switch {
	case kind == 0:
		bad := rapid.SampledFrom(malformedIDs).Draw(t, label+"Malformed")
		return bad, bad
	case kind <= 2 || len(mc.created) == 0:
		id = poolID(rapid.IntRange(0, 12).Draw(t, label+"Pool"))
	default:
		id = rapid.SampledFrom(mc.created).Draw(t, label+"Known")
	}
	return spell(id, rapid.IntRange(0, 6).Draw(t, label+"Spelling")), id
}

func (mc *machine) logf(t *rapid.T, format string, args ...any) {
	mc.step++
	t.Logf("step %d @%v: %s", mc.step, mc.clock.now, fmt.Sprintf(format, args...))
}

func outcome(t model.Task, err error) string {
	if err != nil {
		return ""
	}
	return t.Status + "/" + t.DeliveryStatus + fmt.Sprintf(" v%d", t.Version)
}

// compareTask checks one operation's outcome.
func compareTask(t *rapid.T, op string, got ledger.Task, gerr error, want model.Task, werr error) {
	t.Logf("  -> %s %s", classOf(werr), outcome(want, werr))
	if classOf(gerr) != classOf(werr) {
		t.Fatalf("%s: ledger %s (%v), model %s (%v)", op, classOf(gerr), gerr, classOf(werr), werr)
	}
	// The clock refusal apart from the other StateConflicts: a write that
	// skipped it would store a row that the read back refuses as damaged,
	// a StateConflict too.
	if errors.Is(gerr, ledger.ErrClockBackwards) != errors.Is(werr, model.ErrClockBackwards) {
		t.Fatalf("%s: ledger %v, model %v: one refused for the clock, the other not", op, gerr, werr)
	}
	if gerr == nil && !reflect.DeepEqual(toModel(got), want) {
		t.Fatalf("%s: task differs\nledger %s\nmodel  %s", op, show(toModel(got)), show(want))
	}
}

func (mc *machine) remember(id string) {
	for _, k := range mc.created {
		if k == id {
			return
		}
	}
	mc.created = append(mc.created, id)
}

// Create: any id spelling or none, parents (known, unknown, self), timeouts
// (0, fractional, large, invalid), hashes, internal or delivery-required;
// often a repeat of an existing id with equal or different fields.
func (mc *machine) Create(t *rapid.T) {
	mc.tick(t)
	var p ledger.CreateParams
	var mp model.CreateParams
	switch rapid.IntRange(0, 4).Draw(t, "idKind") {
	case 0: // the ledger generates the id
	default:
		p.TaskID, mp.TaskID = mc.target(t, "id")
	}
	switch rapid.IntRange(0, 3).Draw(t, "parentKind") {
	case 0:
		p.ParentID, mp.ParentID = mc.target(t, "parent")
	case 1:
		if p.TaskID != "" {
			p.ParentID, mp.ParentID = p.TaskID, mp.TaskID
		}
	}
	p.PayloadHash = pick(t, "hash", []string{"", "", hashes[2], hashes[3]}, hashes[4:])
	mp.PayloadHash = p.PayloadHash
	if rapid.Bool().Draw(t, "hasTimeout") {
		v := pick(t, "timeout", []float64{0, 0.25, 0.5, 0.1, 30, 600, 1e10, 1e308, 1e308, math.Copysign(0, -1)}, []float64{-1, math.NaN(), math.Inf(1)})
		if rapid.IntRange(0, 4).Draw(t, "randomTimeout") == 0 {
			v = rapid.Float64Range(0, 2000).Draw(t, "timeoutValue")
		}
		p.SetTimeoutSeconds(v)
		mp.TimeoutSeconds = &v
	}
	p.Internal = rapid.IntRange(0, 3).Draw(t, "internal") == 0
	mp.DeliveryRequired = !p.Internal
	// Repeat an existing task's exact fields now and then.
	if len(mc.created) > 0 && rapid.IntRange(0, 3).Draw(t, "exactRepeat") == 0 {
		old, _ := mc.m.Get(rapid.SampledFrom(mc.created).Draw(t, "repeatOf"))
		p = ledger.CreateParams{TaskID: old.ID, Internal: !old.DeliveryRequired}
		if old.TimeoutSeconds != nil {
			p.SetTimeoutSeconds(*old.TimeoutSeconds)
		}
		if old.ParentID != nil {
			p.ParentID = *old.ParentID
		}
		if old.PayloadHash != nil {
			p.PayloadHash = *old.PayloadHash
		}
		mp = model.CreateParams{TaskID: p.TaskID, ParentID: p.ParentID, PayloadHash: p.PayloadHash, TimeoutSeconds: old.TimeoutSeconds, DeliveryRequired: !p.Internal}
	}
	timeout := "null"
	if mp.TimeoutSeconds != nil {
		timeout = fmt.Sprint(*mp.TimeoutSeconds)
	}
	mc.logf(t, "create id=%q parent=%q hash=%q timeout=%s required=%v", p.TaskID, p.ParentID, p.PayloadHash, timeout, !p.Internal)
	generated := mc.nextGen
	got, gerr := mc.l.Create(p)
	if p.TaskID == "" {
		// The id NewID handed out; when the ledger refused before asking,
		// any fresh id gives the model the same decision.
		mp.TaskID = poolID(1000 + mc.nextGen)
		if mc.nextGen == generated {
			mp.TaskID = poolID(100000 + mc.step)
		}
	}
	want, werr := mc.m.Create(mp, mc.clock.now)
	compareTask(t, "create", got, gerr, want, werr)
	if werr == nil {
		mc.remember(want.ID)
	}
}

// pick draws from common, or (one time in eight) from rare.
func pick[T any](t *rapid.T, label string, common, rare []T) T {
	if rapid.IntRange(0, 7).Draw(t, label+"Rare") == 0 {
		return rapid.SampledFrom(rare).Draw(t, label)
	}
	return rapid.SampledFrom(common).Draw(t, label)
}

// code draws a reason code: none (nil), one registered for status, or any
// other (unregistered for this state, reserved, malformed, or given but
// empty, which is a malformed code and not an absent one).
func (mc *machine) code(t *rapid.T, mach model.Machine, status string) *string {
	switch rapid.IntRange(0, 5).Draw(t, "codeKind") {
	case 0, 1:
		return nil
	case 2, 3, 4:
		if codes := mach.CodesFor(status); len(codes) > 0 {
			c := rapid.SampledFrom(codes).Draw(t, "code")
			return &c
		}
	}
	c := rapid.SampledFrom(anyCodes).Draw(t, "anyCode")
	return &c
}

// codeText renders a drawn code for the op log.
func codeText(code *string) string {
	if code == nil {
		return "<none>"
	}
	return strconv.Quote(*code)
}

// viaStringForm reports whether an op whose code the string form of the
// API can express ("" = none) takes that form this time; a given empty
// code always takes the pointer form.
func viaStringForm(t *rapid.T, code *string) bool {
	return (code == nil || *code != "") && rapid.Bool().Draw(t, "stringForm")
}

func deref(code *string) string {
	if code == nil {
		return ""
	}
	return *code
}

// CreateChild creates a fresh task under a known parent (builds trees).
func (mc *machine) CreateChild(t *rapid.T) {
	if len(mc.created) == 0 {
		t.Skip("no parent yet")
	}
	mc.tick(t)
	parent := rapid.SampledFrom(mc.created).Draw(t, "parent")
	id := poolID(rapid.IntRange(0, 40).Draw(t, "childPool"))
	p := ledger.CreateParams{TaskID: spell(id, rapid.IntRange(0, 6).Draw(t, "idSpelling")), ParentID: parent,
		Internal: !rapid.Bool().Draw(t, "required")}
	var timeout *float64
	if rapid.Bool().Draw(t, "hasTimeout") {
		v := rapid.SampledFrom([]float64{0, 0.25, 0.5, 30, 600, 1e10}).Draw(t, "timeout")
		p.SetTimeoutSeconds(v)
		timeout = &v
	}
	mc.logf(t, "create id=%q parent=%q required=%v", p.TaskID, p.ParentID, !p.Internal)
	got, gerr := mc.l.Create(p)
	want, werr := mc.m.Create(model.CreateParams{TaskID: id, ParentID: parent, TimeoutSeconds: timeout, DeliveryRequired: !p.Internal}, mc.clock.now)
	compareTask(t, "create child", got, gerr, want, werr)
	if werr == nil {
		mc.remember(want.ID)
	}
}

// Start a task (queued, running, terminal or unknown).
func (mc *machine) Start(t *rapid.T) {
	mc.tick(t)
	arg, id := mc.target(t, "id")
	mc.logf(t, "start %q", arg)
	got, gerr := mc.l.Start(arg)
	want, werr := mc.m.Start(id, mc.clock.now)
	compareTask(t, "start", got, gerr, want, werr)
}

// Heartbeat a task.
func (mc *machine) Heartbeat(t *rapid.T) {
	mc.tick(t)
	arg, id := mc.target(t, "id")
	mc.logf(t, "heartbeat %q", arg)
	got, gerr := mc.l.Heartbeat(arg)
	want, werr := mc.m.Heartbeat(id, mc.clock.now)
	compareTask(t, "heartbeat", got, gerr, want, werr)
}

// Close a task with any status word and a valid, unregistered or malformed code.
func (mc *machine) Close(t *rapid.T) {
	mc.tick(t)
	arg, id := mc.target(t, "id")
	status := pick(t, "status", model.TaskMachine.Terminal, []string{"queued", "running", "bogus", ""})
	code := mc.code(t, model.TaskMachine, status)
	mc.logf(t, "close %q %q %s", arg, status, codeText(code))
	var got ledger.Task
	var gerr error
	if viaStringForm(t, code) {
		got, gerr = mc.l.CloseTask(arg, ledger.Status(status), ledger.Code(deref(code)))
	} else {
		got, gerr = mc.l.CloseTaskOptionalCode(context.Background(), arg, ledger.Status(status), code)
	}
	want, werr := mc.m.CloseCode(id, status, code, mc.clock.now)
	compareTask(t, "close", got, gerr, want, werr)
}

// SetDelivery with any delivery word and code.
func (mc *machine) SetDelivery(t *rapid.T) {
	mc.tick(t)
	arg, id := mc.target(t, "id")
	status := pick(t, "status", model.DeliveryMachine.Terminal, []string{"pending", "bogus"})
	code := mc.code(t, model.DeliveryMachine, status)
	mc.logf(t, "delivery %q %q %s", arg, status, codeText(code))
	var got ledger.Task
	var gerr error
	if viaStringForm(t, code) {
		got, gerr = mc.l.SetDelivery(arg, ledger.DeliveryStatus(status), ledger.Code(deref(code)))
	} else {
		got, gerr = mc.l.SetDeliveryOptionalCode(context.Background(), arg, ledger.DeliveryStatus(status), code)
	}
	want, werr := mc.m.SetDeliveryCode(id, status, code, mc.clock.now)
	compareTask(t, "delivery", got, gerr, want, werr)
}

// Get a task.
func (mc *machine) Get(t *rapid.T) {
	arg, id := mc.target(t, "id")
	mc.logf(t, "get %q", arg)
	got, gerr := mc.l.Get(arg)
	want, werr := mc.m.Get(id)
	compareTask(t, "get", got, gerr, want, werr)
}

// ChildrenOf a task.
func (mc *machine) ChildrenOf(t *rapid.T) {
	arg, id := mc.target(t, "id")
	mc.logf(t, "children %q", arg)
	got, gerr := mc.l.ChildrenOf(arg)
	want, werr := mc.m.ChildrenOf(id)
	if classOf(gerr) != classOf(werr) {
		t.Fatalf("children: ledger %s (%v), model %s", classOf(gerr), gerr, classOf(werr))
	}
	if len(got) != len(want) {
		t.Fatalf("children: ledger %d, model %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(toModel(got[i]), want[i]) {
			t.Fatalf("child %d differs\nledger %s\nmodel  %s", i, show(toModel(got[i])), show(want[i]))
		}
	}
}

// Reconcile with random graces, as a dry run or applied.
func (mc *machine) Reconcile(t *rapid.T) {
	mc.tick(t)
	grace := func(label string) float64 {
		if rapid.IntRange(0, 3).Draw(t, label+"Random") == 0 {
			return rapid.Float64Range(0, 2000).Draw(t, label)
		}
		return pick(t, label, []float64{0, 0.25, 0.5, 30, 600, 1e10}, []float64{-1, math.NaN(), math.Inf(1)})
	}
	active, delivery := grace("activeGrace"), grace("deliveryGrace")
	mc.boundaryClock(t, active, delivery)
	dry := rapid.Bool().Draw(t, "dryRun")
	mc.logf(t, "reconcile active=%v delivery=%v dry=%v", active, delivery, dry)
	got, gerr := ledgerrows.ReconcileSeconds(context.Background(), mc.l, active, delivery, dry)
	want, werr := mc.m.Reconcile(mc.clock.now, active, delivery, dry)
	if classOf(gerr) != classOf(werr) {
		t.Fatalf("reconcile: ledger %s (%v), model %s (%v)", classOf(gerr), gerr, classOf(werr), werr)
	}
	t.Logf("  -> %s %+v", classOf(werr), want)
	if gerr == nil && fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("reconcile report\nledger %+v\nmodel  %+v", got, want)
	}
}

// boundaryClock sometimes moves the clock onto a decision boundary of a
// stored task: its deadline, its last update plus the active grace, or its
// end plus the delivery grace (where <= and < differ).
func (mc *machine) boundaryClock(t *rapid.T, active, delivery float64) {
	tasks := mc.m.Tasks()
	if len(tasks) == 0 || rapid.IntRange(0, 2).Draw(t, "boundary") != 0 {
		return
	}
	task := tasks[rapid.IntRange(0, len(tasks)-1).Draw(t, "boundaryTask")]
	candidates := []float64{task.UpdatedAt + active}
	if task.DeadlineAt != nil {
		candidates = append(candidates, *task.DeadlineAt)
	}
	if task.EndedAt != nil {
		candidates = append(candidates, *task.EndedAt+delivery)
	}
	next := rapid.SampledFrom(candidates).Draw(t, "boundaryAt")
	if !math.IsNaN(next) && !math.IsInf(next, 0) {
		mc.clock.now = next
	}
}

// check runs after every action: full rows, doctor and Checker agree.
func (mc *machine) check(t *rapid.T) {
	tasks, events, err := readRows(mc.reader)
	if err != nil {
		t.Fatalf("read rows: %v", err)
	}
	wantTasks, wantEvents := mc.m.Tasks(), mc.m.Events()
	if len(tasks) != len(wantTasks) {
		t.Fatalf("rows: ledger %d tasks, model %d", len(tasks), len(wantTasks))
	}
	for i := range tasks {
		if !reflect.DeepEqual(tasks[i], wantTasks[i]) {
			t.Fatalf("row %d differs\nledger %s\nmodel  %s", i, show(tasks[i]), show(wantTasks[i]))
		}
	}
	if !reflect.DeepEqual(events, wantEvents) {
		t.Fatalf("events differ\nledger %s\nmodel  %s", showEvents(events), showEvents(wantEvents))
	}
	counts := model.Check(tasks, events)
	if !counts.Healthy() {
		t.Fatalf("Checker finds the ledger's rows unhealthy: %+v", counts)
	}
	doc, err := mc.l.Doctor()
	if err != nil {
		t.Fatalf("doctor: %v", err)
	}
	if !doc.Healthy || !doc.QuickCheckOK || !doc.SchemaOK || doc.DoctorErrorCount != 0 {
		t.Fatalf("doctor unhealthy: %+v", doc)
	}
	if doc.TaskCount != counts.TaskCount || doc.EventCount != counts.EventCount ||
		!reflect.DeepEqual(textKeys(doc.TaskStatusCounts), counts.TaskStatusCounts) ||
		!reflect.DeepEqual(textKeys(doc.DeliveryStatusCounts), counts.DeliveryStatusCounts) ||
		doc.OrphanCount != counts.OrphanCount || doc.ParentCycleCount != counts.ParentCycleCount ||
		doc.ForeignKeyErrorCount != counts.ForeignKeyErrorCount ||
		doc.StateInconsistencyCount != counts.StateInconsistencyCount ||
		doc.TimestampInconsistencyCount != counts.TimestampInconsistencyCount ||
		doc.EventInconsistencyCount != counts.EventInconsistencyCount {
		t.Fatalf("doctor and Checker disagree\ndoctor  %+v\nchecker %+v", doc, counts)
	}
}

func showEvents(es []model.Event) string {
	var b strings.Builder
	for _, e := range es {
		from, code := "null", "null"
		if e.From != nil {
			from = *e.From
		}
		if e.Code != nil {
			code = *e.Code
		}
		fmt.Fprintf(&b, "\n  #%d %s %s %s->%s @%v code=%s", e.Sequence, e.TaskID, e.Kind, from, e.To, e.OccurredAt, code)
	}
	return b.String()
}

// defaultModelChecks keeps the default run fast; -rapid.checks overrides it.
const defaultModelChecks = "50"

func TestLedgerMatchesModel(t *testing.T) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if !explicit {
		old := flag.Lookup("rapid.checks").Value.String()
		if err := flag.Set("rapid.checks", defaultModelChecks); err != nil {
			t.Fatal(err)
		}
		defer flag.Set("rapid.checks", old)
	}
	rapid.Check(t, func(rt *rapid.T) {
		mc := newMachine(rt, t.TempDir())
		defer mc.close(rt)
		rt.Repeat(map[string]func(*rapid.T){
			"create":    mc.Create,
			"start":     mc.Start,
			"heartbeat": mc.Heartbeat,
			"close":     mc.Close,
			"delivery":  mc.SetDelivery,
			"get":       mc.Get,
			"children":  mc.ChildrenOf,
			"reconcile": mc.Reconcile,
			"list":      mc.List,
			"prune":     mc.Prune,
			"finish":    mc.Finish,
			"":          mc.check,
		})
	})
}

// missingFixture fails the test: every recorded fixture is part of the
// repository (spec/testdata/fixtures), so an absent one is a broken checkout.
func missingFixture(t testing.TB, name string) {
	t.Helper()
	t.Fatal("fixture missing from spec/testdata/fixtures: " + name)
}

// TestCheckerAgreesWithDoctorOnFixtures runs the model's Checker over the
// rows of the reference ledger's fixture files (healthy and damaged) and
// compares its counts with the reference doctor's recorded report and with
// the Go doctor on a read-only open of the same copy.
func TestCheckerAgreesWithDoctorOnFixtures(t *testing.T) {
	fixtures := testfixtures.Dir(t, "ledger")
	names := []string{"small-v2", "broken-status-edited", "broken-event-deleted", "broken-timestamp-order",
		"broken-orphan-parent", "broken-parent-cycle"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(fixtures, name+".sqlite")
			data, err := os.ReadFile(src)
			if errors.Is(err, os.ErrNotExist) {
				missingFixture(t, name)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "private")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "copy.sqlite")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var expected struct {
				APIReadOnlyDoctor struct {
					Report string `json:"report"`
				} `json:"api_read_only_doctor"`
			}
			raw, err := os.ReadFile(filepath.Join(fixtures, name+".expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &expected); err != nil {
				t.Fatal(err)
			}
			var ref map[string]any
			if err := json.Unmarshal([]byte(expected.APIReadOnlyDoctor.Report), &ref); err != nil {
				t.Fatal(err)
			}

			// Rows through a private immutable read of this test's own copy
			// (no writer can touch it), before any ledger connection exists.
			db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
			if err != nil {
				t.Fatal(err)
			}
			tasks, events, err := readRows(db)
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			c := model.Check(tasks, events)
			mine := map[string]int{
				"task_count": c.TaskCount, "event_count": c.EventCount, "orphan_count": c.OrphanCount,
				"parent_cycle_count": c.ParentCycleCount, "foreign_key_error_count": c.ForeignKeyErrorCount,
				"state_inconsistency_count":     c.StateInconsistencyCount,
				"timestamp_inconsistency_count": c.TimestampInconsistencyCount,
				"event_inconsistency_count":     c.EventInconsistencyCount,
			}
			for key, v := range mine {
				if want := int(ref[key].(float64)); v != want {
					t.Errorf("Checker %s = %d, reference doctor %d", key, v, want)
				}
			}
			if c.Healthy() != ref["healthy"].(bool) {
				t.Errorf("Checker healthy %v, reference %v", c.Healthy(), ref["healthy"])
			}
			for state, n := range ref["task_status_counts"].(map[string]any) {
				if c.TaskStatusCounts[state] != int(n.(float64)) {
					t.Errorf("task status %s: Checker %d, reference %v", state, c.TaskStatusCounts[state], n)
				}
			}

			l, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only open: %v", err)
			}
			defer l.Close()
			doc, err := l.Doctor()
			if err != nil {
				t.Fatalf("doctor: %v", err)
			}
			goDoc := map[string]int{
				"task_count": doc.TaskCount, "event_count": doc.EventCount, "orphan_count": doc.OrphanCount,
				"parent_cycle_count": doc.ParentCycleCount, "foreign_key_error_count": doc.ForeignKeyErrorCount,
				"state_inconsistency_count":     doc.StateInconsistencyCount,
				"timestamp_inconsistency_count": doc.TimestampInconsistencyCount,
				"event_inconsistency_count":     doc.EventInconsistencyCount,
			}
			if !reflect.DeepEqual(goDoc, mine) || doc.Healthy != c.Healthy() {
				t.Errorf("Go doctor and Checker disagree\ndoctor  %v\nchecker %v", goDoc, mine)
			}
		})
	}
}

// textKeys turns the ledger's typed state keys into the model's plain ones.
func textKeys[K ~string](m map[K]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}
