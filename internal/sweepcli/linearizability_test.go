package sweepcli_test

import (
	"fmt"
	"hash/fnv"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stateguard/stateguard/internal/pyjson"
	"github.com/stateguard/stateguard/model/sweep"
)

// linearHistoriesEnv raises the number of histories checked;
// linearSeedEnv replays the plans of a run (the interleaving is the
// scheduler's).
const (
	linearHistoriesEnv = "STATEGUARD_LINEAR_HISTORIES"
	linearSeedEnv      = "STATEGUARD_LINEAR_SEED"
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
	histories := 3
	if s := os.Getenv(linearHistoriesEnv); s != "" {
		histories, _ = strconv.Atoi(s)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(linearSeedEnv); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (replay the plans with %s=%d)", seed, linearSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	ops := 0
	for h := 0; h < histories; h++ {
		state := filepath.Join(t.TempDir(), "state.yml")
		var plans [][]sweepCall
		for c := 0; c < 4; c++ {
			plans = append(plans, sweepLinearPlan(rng, c, 10))
		}
		history := recordHistory(t, plans, func(args []string) []string {
			return append([]string{args[0], "--state", state}, args[1:]...)
		})
		ops += len(history)
		checkLinearizable(t, sweepSpec, history)
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

// recordHistory runs each plan in its own goroutine, one process per call,
// and records the calls with monotonic call and return times.
func recordHistory(t *testing.T, plans [][]sweepCall, argv func([]string) []string) []porcupine.Operation {
	t.Helper()
	start := time.Now()
	var mu sync.Mutex
	var history []porcupine.Operation
	var wg sync.WaitGroup
	for c, plan := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, sc := range plan {
				cmd := exec.Command(binPath, argv(sc.args)...)
				call := time.Since(start).Nanoseconds()
				out, err := cmd.Output()
				ret := time.Since(start).Nanoseconds()
				if err != nil {
					t.Errorf("%q: %v", sc.args, err)
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: sc, Call: call, Output: string(out), Return: ret})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return history
}

// checkLinearizable fails with the history, in call order, when no
// sequential order explains it.
func checkLinearizable(t *testing.T, m porcupine.Model, history []porcupine.Operation) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(m, history, time.Minute)
	switch res {
	case porcupine.Ok:
		return
	case porcupine.Unknown:
		t.Fatal("porcupine gave up within a minute")
	}
	sort.Slice(history, func(i, j int) bool { return history[i].Call < history[j].Call })
	var b strings.Builder
	b.WriteString("not linearizable: no order of the calls, each taking effect between its call and return, explains the answers.\nhistory (client, call..return in µs, call -> answer):\n")
	for _, op := range history {
		fmt.Fprintf(&b, "  c%d %8d..%-8d %s\n", op.ClientId, op.Call/1000, op.Return/1000, m.DescribeOperation(op.Input, op.Output))
	}
	longest := []porcupine.Operation(nil)
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	b.WriteString("longest order the model accepts:\n")
	for _, op := range longest {
		fmt.Fprintf(&b, "  c%d %s\n", op.ClientId, m.DescribeOperation(op.Input, op.Output))
	}
	t.Fatal(b.String())
}
