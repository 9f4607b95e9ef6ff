// Package lincheck holds what the linearizability tests of both engines
// share: their knobs, the recording of concurrent CLI calls as a history,
// and porcupine's verdict printed so a person can follow it.
package lincheck

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stateguard/stateguard/internal/testsupport/envknob"
)

// Environment knobs: HistoriesEnv raises the number of histories checked,
// SeedEnv replays the plans of a run (the interleaving is the scheduler's).
const (
	HistoriesEnv = "STATEGUARD_LINEAR_HISTORIES"
	SeedEnv      = "STATEGUARD_LINEAR_SEED"
)

// Config reads the knobs: the number of histories (default 3) and a
// generator for the plans. stream keeps the engines' plans apart.
func Config(t testing.TB, stream uint64) (histories int, rng *rand.Rand) {
	t.Helper()
	return envknob.Count(t, HistoriesEnv, 3), envknob.Rand(t, SeedEnv, stream)
}

// Record runs each plan on its own goroutine (one client), one call after
// another, and records every call with monotonic call and return times and
// the answer run gives for it.
func Record[C any](plans [][]C, run func(C) string) []porcupine.Operation {
	start := time.Now()
	var mu sync.Mutex
	var history []porcupine.Operation
	var wg sync.WaitGroup
	for client, plan := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range plan {
				call := time.Since(start).Nanoseconds()
				out := run(c)
				ret := time.Since(start).Nanoseconds()
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: client, Input: c, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return history
}

// Check fails the test when no sequential order of the calls, each taking
// effect between its call and its return, lets m give every answer. The
// failure lists the history in call order and the longest order m accepts.
func Check(t testing.TB, m porcupine.Model, history []porcupine.Operation) {
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
	var longest []porcupine.Operation
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
