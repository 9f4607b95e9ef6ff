package sweepcli_test

import (
	"fmt"
	"hash/fnv"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/testsupport/lincheck"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/model/sweep"
)

// sweepCall is one CLI call as the history records it: the command line
// and the model's reading of it.
type sweepCall struct {
	args []string
	cmd  sweep.Command
}

// sweepState is the model's file state with a printable key (the document
// as JSON) for equality and hashing.
type sweepState struct {
	st  sweep.State
	key string
}

func newSweepState(st sweep.State) sweepState {
	key := fmt.Sprint(st.Kind)
	if st.Doc != nil {
		key += string(pyjson.Encode(st.Doc))
	}
	return sweepState{st: st, key: key}
}

// sweepSpec is the model as porcupine's sequential specification: a call
// may take effect at a moment only if the model, in the state of that
// moment, answers exactly what the process printed.
var sweepSpec = porcupine.Model{
	Init: func() any { return newSweepState(sweep.State{Kind: sweep.Absent}) },
	Step: func(state, input, output any) (bool, any) {
		s := state.(sweepState)
		res, next := sweep.Apply(s.st, input.(sweepCall).cmd)
		return sweepAnswer(res) == output.(string), newSweepState(next)
	},
	Equal: func(a, b any) bool { return a.(sweepState).key == b.(sweepState).key },
	Hash: func(s any) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s.(sweepState).key))
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%s -> %q", strings.Join(input.(sweepCall).args, " "), output)
	},
	DescribeState: func(s any) string { return s.(sweepState).key },
}

// sweepAnswer is the model's result as the CLI prints it.
func sweepAnswer(res sweep.Result) string {
	out := res.Word + "\n"
	if res.Payload != nil {
		out += string(pyjson.Encode(res.Payload)) + "\n"
	}
	return out
}

// TestLinearizableSweep races writer processes on one state file, records
// when each call began and returned and what it printed, and asks
// porcupine whether some order of the calls, each placed between its own
// call and return, explains every answer by the model (model/sweep). Lease
// times straddle a one-minute TTL, so LOCKED, STALE-RECLAIMED and
// LEASE-LOST depend on the order. STATEGUARD_LINEAR_HISTORIES=N checks N
// histories (default 3).
func TestLinearizableSweep(t *testing.T) {
	histories, rng := lincheck.Config(t, 1)
	ops := 0
	for h := 0; h < histories; h++ {
		state := filepath.Join(t.TempDir(), "state.yml")
		var plans [][]sweepCall
		for c := 0; c < 4; c++ {
			plans = append(plans, sweepLinearPlan(rng, c, 10))
		}
		history := lincheck.Record(plans, func(sc sweepCall) string {
			args := append([]string{sc.args[0], "--state", state}, sc.args[1:]...)
			var out []byte
			err := platformtest.RetryWineStart(t, func() (err error) {
				out, err = exec.Command(binPath, args...).Output()
				return err
			})
			if err != nil {
				t.Errorf("%q: %v", sc.args, err)
			}
			return string(out)
		})
		ops += len(history)
		lincheck.Check(t, sweepSpec, history)
	}
	t.Logf("%d histories, %d calls: linearizable", histories, ops)
}

// sweepLinearPlan draws n calls for client c.
func sweepLinearPlan(rng *rand.Rand, c, n int) []sweepCall {
	writers := []string{"w1", "w2"}
	times := []string{"2026-07-02T12:00:00Z", "2026-07-02T12:00:30Z", "2026-07-02T12:01:00Z",
		"2026-07-02T12:01:00.000001Z", "2026-07-02T12:01:30Z", "2026-07-02T12:02:01Z"}
	var calls []sweepCall
	for i := 0; i < n; i++ {
		w := writers[rng.IntN(len(writers))]
		now := times[rng.IntN(len(times))]
		id := fmt.Sprint(rng.IntN(3))
		var sc sweepCall
		switch r := rng.IntN(12); {
		case r < 3:
			sc = sweepCall{[]string{"lease-acquire", "--writer", w, "--now", now, "--ttl-minutes", "1"},
				sweep.LeaseAcquire{Writer: w, Now: now, TTLMinutes: big.NewInt(1)}}
		case r < 4:
			sc = sweepCall{[]string{"lease-release", "--writer", w}, sweep.LeaseRelease{Writer: w}}
		case r < 7:
			status := []string{"closed", "ingested"}[rng.IntN(2)]
			text := fmt.Sprintf(`{"status": %q, "title": "by client %d call %d"}`, status, c, i)
			v, err := pyjson.Decode(text)
			if err != nil {
				panic(err)
			}
			sc = sweepCall{[]string{"upsert-item", "--source", "s", "--id", id, "--json", text, "--writer", w, "--now", now},
				sweep.UpsertItem{Source: "s", ID: id, Writer: w, Now: now, Item: sweep.Decoded{Value: v, OK: true}}}
		case r < 9:
			to := fmt.Sprint(rng.IntN(20))
			sc = sweepCall{[]string{"cursor-advance", "--source", "s", "--to", to, "--past-item", id, "--writer", w, "--now", now},
				sweep.CursorAdvance{Source: "s", To: to, PastItem: id, Writer: w, Now: now}}
		case r < 10:
			sc = sweepCall{[]string{"validate"}, sweep.Validate{}}
		case r < 11:
			counts := fmt.Sprintf(`{"client": %d, "call": %d}`, c, i)
			v, _ := pyjson.Decode(counts)
			sc = sweepCall{[]string{"run-record", "--writer", w, "--outcome", "partial", "--counts", counts, "--timestamp", now},
				sweep.RunRecord{Writer: w, Outcome: "partial", Timestamp: now, Counts: sweep.Decoded{Value: v, OK: true}}}
		default:
			sc = sweepCall{[]string{"read"}, sweep.Read{}}
		}
		calls = append(calls, sc)
	}
	return calls
}
