package ledgercli_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/stateguard/stateguard/internal/testsupport/lincheck"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	model "github.com/stateguard/stateguard/model/ledger"
)

// ledgerState is a model ledger with a key (tasks and events as JSON) for
// equality and hashing.
type ledgerState struct {
	m   *model.Model
	key string
}

func newLedgerState(m *model.Model) ledgerState {
	var tasks []string
	for _, t := range m.Tasks() {
		tasks = append(tasks, canonicalJSON(taskMap(t)))
	}
	return ledgerState{m: m, key: fmt.Sprintf("%v %d", tasks, len(m.Events()))}
}

// ledgerSpec is model/ledger as porcupine's sequential specification. The
// key counts events rather than listing them: every event belongs to one
// task transition, which the task's version already counts.
var ledgerSpec = porcupine.Model{
	Init: func() any { return newLedgerState(&model.Model{}) },
	Step: func(state, input, output any) (bool, any) {
		if readGaveUp(input.(ledgerOp), output.(string)) {
			return true, state
		}
		next := state.(ledgerState).m.Clone()
		got := input.(ledgerOp).apply(next)
		return got == output.(string), newLedgerState(next)
	},
	Equal: func(a, b any) bool { return a.(ledgerState).key == b.(ledgerState).key },
	Hash: func(s any) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s.(ledgerState).key))
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%s -> %s", input.(ledgerOp), output)
	},
	DescribeState: func(s any) string { return s.(ledgerState).key },
}

// readGaveUp reports a read-only call (get, a dry run) that answered
// StateConflict where there are no OFD locks: there a read beside writers
// that never pause may give up after its retries (spec 12.4), an answer
// the model has no state for. It observed nothing and changed nothing, so
// it fits anywhere in the order: the check then holds every other answer,
// each read that did answer included, to the model.
func readGaveUp(o ledgerOp, answer string) bool {
	return !platformtest.HasOFDLocks && o.readOnly() && answer == "error StateConflict"
}

// readOnly reports the calls that open the ledger read-only (spec 12).
func (o ledgerOp) readOnly() bool {
	return o.Kind == "get" || o.Kind == "reconcile" && o.DryRun
}

// TestLinearizableLedger races CLI processes on one ledger (create, start,
// heartbeat, close, delivery, reconcile with short graces, dry runs, get)
// over three shared task ids, records each call's interval and answer, and
// asks porcupine for an order in which model/ledger gives every answer.
// Each call runs with its own pinned clock, so the model knows its "now";
// concurrent calls with crossed clocks meet "clock moved backwards"
// conflicts, which the model must explain too.
// STATEGUARD_LINEAR_HISTORIES=N checks N histories (default 3).
//
// Where OFD locks do not exist (Windows, macOS) a read-only call may give
// up beside writers (spec 12.4; seen under Wine as get -> StateConflict):
// readGaveUp lets such a call fit anywhere, and the test requires that
// some read-only calls answered, so the view's reads beside writers are
// checked there too, not only excused.
func TestLinearizableLedger(t *testing.T) {
	checkLinearizable(t, func(h int) string {
		return filepath.Join(t.TempDir(), "ledger.sqlite")
	})
}

// TestLinearizableLedgerOnServer races the same CLI processes on a ledger
// held by PostgreSQL (--db a URL, a fresh database per history): each call
// is its own process with its own connection, and each pins its clock, so
// the model knows its "now" as on a file.
func TestLinearizableLedgerOnServer(t *testing.T) {
	checkLinearizable(t, func(int) string { return pgtest.Database(t) })
}

// checkLinearizable records the histories on the ledgers newDB names
// (initialised first) and checks each with porcupine.
func checkLinearizable(t *testing.T, newDB func(history int) string) {
	histories, rng := lincheck.Config(t, 2)
	bin := ledgerBinary(t)
	calls, reads, gaveUp := 0, 0, 0
	for h := 0; h < histories; h++ {
		// An initialised ledger: the model has no "no file" state (the
		// read-only commands refuse a missing file, L2).
		db := newDB(h)
		if out, rc := runLedger(t, bin, "--db", db, "init"); rc != 0 {
			t.Fatalf("init: %s", out)
		}
		var plans [][]ledgerOp
		for c := 0; c < 4; c++ {
			plans = append(plans, ledgerLinearPlan(rng, h, c, 8))
		}
		history := lincheck.Record(plans, func(o ledgerOp) string {
			answer, err := opAnswer(t, bin, db, o)
			if err != nil {
				t.Errorf("%s: %v", o, err)
			}
			return answer
		})
		calls += len(history)
		for _, op := range history {
			if o := op.Input.(ledgerOp); o.readOnly() {
				reads++
				if readGaveUp(o, op.Output.(string)) {
					gaveUp++
				}
			}
		}
		lincheck.Check(t, ledgerSpec, history)
	}
	if reads > 0 && gaveUp == reads {
		t.Fatalf("every one of %d read-only calls gave up: the reads beside writers were never checked", reads)
	}
	t.Logf("%d histories, %d calls (%d read-only, %d of them gave up): linearizable", histories, calls, reads, gaveUp)
}

// ledgerLinearPlan draws n calls for client c of history h.
func ledgerLinearPlan(rng *rand.Rand, h, c, n int) []ledgerOp {
	ids := []string{poolID(3 * h), poolID(3*h + 1), poolID(3*h + 2)}
	var ops []ledgerOp
	for i := 0; i < n; i++ {
		o := ledgerOp{ID: ids[rng.IntN(len(ids))], Now: 1_700_000_000 + float64(i) + 0.25*float64(c)}
		switch r := rng.IntN(16); {
		case r < 4:
			o.Kind = "create"
			o.Timeout = float64(rng.IntN(2) * 2) // 0 (none) or 2 s: a second create may differ
			o.Internal = rng.IntN(5) == 0
		case r < 7:
			o.Kind = "start"
		case r < 8:
			o.Kind = "heartbeat"
		case r < 10:
			o.Kind = "close"
			o.Status = []string{"succeeded", "failed", "cancelled"}[rng.IntN(3)]
		case r < 12:
			o.Kind = "delivery"
			o.Status = []string{"delivered", "failed", "not_applicable"}[rng.IntN(3)]
		case r < 14:
			o.Kind, o.ID = "reconcile", ""
			o.ActiveGrace, o.DeliveryGrace = 1.5, 1.5
			o.DryRun = rng.IntN(3) == 0
		default:
			o.Kind = "get"
		}
		ops = append(ops, o)
	}
	return ops
}
