//go:build unix

package ledgercli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/internal/storage/walfile"
	model "github.com/stateguard/stateguard/model/ledger"
	"github.com/stateguard/stateguard/tools/planrun/journal"
)

// TestCrashLoopLedger kills processes writing one ledger at random
// moments. Every call that returned must have answered what the model
// (model/ledger) answers for the same calls in the same order. After every
// kill, before any writer runs: the read-only doctor reports healthy, and
// every task, read with the read-only get, is what the model holds either
// before or after the call in flight, for all tasks at once (a
// transaction is applied whole or not at all; a call that printed ok is
// never lost). Until a call makes the file, the model is a ledger with
// no file (a kill can land before the first call made it, and the next
// round's calls may all be ones that create nothing).
// STATEGUARD_CRASH_KILLS=N runs N kills.
func TestCrashLoopLedger(t *testing.T) {
	kills, rng := journal.Config(t, 0x1ed9e7)
	dir := t.TempDir()
	bin := ledgerBinary(t)
	planrun, err := journal.BuildPlanrun(dir)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "ledger", "ledger.sqlite")
	m := &model.Model{}
	exists := false // whether the ledger file exists, as the model sees it
	now := 1_700_000_000.0
	sidecars := map[string]int{}
	var inFlight, applied, calls, refusedReads, firstCreation int
	everOK := false
	for k := 0; k < kills; k++ {
		ops := ledgerPlan(rng, k, &now, 8)
		plan := make([]journal.Step, len(ops))
		for i, o := range ops {
			plan[i] = journal.Step{Argv: append([]string{bin}, o.args(db)...), Env: o.env()}
		}
		j, err := journal.RunAndKill(planrun, dir, plan, time.Duration(rng.IntN(40_000))*time.Microsecond)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range j.Ended {
			want := ops[i].applyTo(m, &exists)
			if got := cliAnswer(e.Stdout, e.ExitStatus); got != want {
				t.Fatalf("kill %d, call %d (%s):\n got %s\nwant %s", k, i, ops[i], got, want)
			}
		}
		calls += len(j.Ended)
		for _, e := range j.Ended {
			everOK = everOK || e.ExitStatus == 0
		}
		sc := sidecarState(db)
		sidecars[sc]++

		// Before any writer: the read-only doctor.
		out, rc := runLedger(t, bin, "--db", db, "doctor")
		var report struct{ Healthy bool }
		json.Unmarshal([]byte(out), &report)
		walCommits := logHoldsCommit(db + "-wal")
		switch {
		case rc == 0 && report.Healthy:
		case !everOK && (sc != "wal alone" || !walCommits):
			// No call has returned ok yet, so the kill may have come
			// while the first call was still creating the file: no file,
			// an empty one, a rollback journal from before WAL mode was
			// on (read-only commands refuse a -journal: the ledgers never
			// run outside WAL mode), or no committed schema yet, a lone
			// -wal without a commit included (SQLite makes the -wal, then
			// the -shm). Nothing was promised; the next writer creates or
			// recovers it. A lone -wal that holds a commit must read.
			firstCreation++
			runLedger(t, bin, "--db", db, "heartbeat", poolID(0xfffff))
		default:
			refusedReads++
			why := "unhealthy: a transaction was applied in part"
			if rc == 2 {
				why = "refused (read-only commands refuse some files a crash leaves, a lone -wal above all, until a writer opens the ledger)"
			}
			t.Errorf("kill %d: read-only doctor after the kill: %s; answer %s (exit %d), sidecars %q, a commit in the -wal %v", k, why, strings.TrimSpace(out), rc, sc, walCommits)
			// Let a writer recover the file so that the checks below,
			// and the rest of the run, still count.
			runLedger(t, bin, "--db", db, "heartbeat", poolID(0xfffff))
		}

		if sc == "no database" {
			// Nothing was ever created, so nothing may have been promised.
			if len(m.Tasks()) > 0 {
				t.Fatalf("kill %d: lost: the database is gone but %d tasks were created", k, len(m.Tasks()))
			}
			exists = false
			continue
		}
		// The file is there (the call in flight may have made it, and the
		// doctor's branch above has let a writer recover it).
		wasThere := exists
		exists = true
		before, after := m, m
		var ids []string
		if j.InFlight >= 0 {
			inFlight++
			if op := ops[j.InFlight]; op.writes() {
				after = m.Clone()
				op.applyTo(after, &wasThere)
			}
			ids = changedIDs(before, after)
		}
		ids = append(ids, roundIDs(k)...)
		matchBefore, matchAfter := true, true
		var report2 []string
		for _, id := range ids {
			out, rc := runLedger(t, bin, "--db", db, "get", id)
			got := cliAnswer(out, rc)
			b := ledgerOp{Kind: "get", ID: id}.apply(before)
			a := ledgerOp{Kind: "get", ID: id}.apply(after)
			matchBefore = matchBefore && got == b
			matchAfter = matchAfter && got == a
			report2 = append(report2, fmt.Sprintf("%s\n   got    %s\n   before %s\n   after  %s", id, got, b, a))
		}
		switch {
		case matchBefore:
		case matchAfter:
			m = after
			applied++
		default:
			inflight := "none"
			if j.InFlight >= 0 {
				inflight = ops[j.InFlight].String()
			}
			t.Fatalf("kill %d: lost or torn: the ledger is neither before nor after the call in flight (%s)\n%s", k, inflight, strings.Join(report2, "\n"))
		}
	}
	var sc []string
	for k, n := range sidecars {
		sc = append(sc, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(sc)
	t.Logf("%d kills, %d calls returned and matched the model; %d kills hit a call in flight (%d applied); read-only doctor refused %d times (and %d times while the first call was still creating the file); 0 torn, 0 lost; files after the kills: %s",
		kills, calls, inFlight, applied, refusedReads, firstCreation, strings.Join(sc, ", "))
}

// sidecarState names the WAL sidecars next to db.
// logHoldsCommit reports whether the -wal at p holds a committed
// transaction by SQLite's rules.
func logHoldsCommit(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false
	}
	log, err := walfile.Read(f, st.Size())
	return err == nil && log.DBPages != 0
}

func sidecarState(db string) string {
	has := func(suffix string) bool {
		_, err := os.Lstat(db + suffix)
		return !errors.Is(err, fs.ErrNotExist)
	}
	switch wal, shm := has("-wal"), has("-shm"); {
	case !has(""):
		return "no database"
	case has("-journal"):
		return "journal"
	case wal && shm:
		return "wal+shm"
	case wal:
		return "wal alone"
	case shm:
		return "shm alone"
	}
	return "no sidecars"
}

// changedIDs are the tasks that differ between two models.
func changedIDs(a, b *model.Model) []string {
	at := map[string]string{}
	for _, t := range a.Tasks() {
		at[t.ID] = canonicalJSON(taskMap(t))
	}
	var ids []string
	for _, t := range b.Tasks() {
		if at[t.ID] != canonicalJSON(taskMap(t)) {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// roundIDs are the fresh tasks of round k.
func roundIDs(k int) []string {
	return []string{poolID(4 * k), poolID(4*k + 1), poolID(4*k + 2)}
}

// ledgerPlan draws n calls on round k's tasks (a child may hang under the
// previous round's first task), each one clock tick after the previous.
// Short graces let reconcile time out and fail deliveries.
func ledgerPlan(rng *rand.Rand, k int, now *float64, n int) []ledgerOp {
	ids := roundIDs(k)
	pick := func() string { return ids[rng.IntN(len(ids))] }
	var ops []ledgerOp
	for i := 0; i < n; i++ {
		*now += 1
		o := ledgerOp{Now: *now, ID: pick()}
		switch r := rng.IntN(20); {
		case r < 6 || i == 0:
			o.Kind = "create"
			if rng.IntN(4) == 0 && k > 0 {
				o.Parent = poolID(4 * (k - 1))
			}
			if rng.IntN(2) == 0 {
				o.Timeout = float64(1 + rng.IntN(4))
			}
			o.Internal = rng.IntN(4) == 0
		case r < 10:
			o.Kind = "start"
		case r < 12:
			o.Kind = "heartbeat"
		case r < 15:
			o.Kind = "close"
			o.Status = []string{"succeeded", "failed", "timed_out", "cancelled"}[rng.IntN(4)]
			if rng.IntN(2) == 0 {
				o.Code = map[string]string{"succeeded": "completed", "failed": "worker_failed", "timed_out": "deadline_exceeded", "cancelled": "caller_cancelled"}[o.Status]
			}
		case r < 18:
			o.Kind = "delivery"
			o.Status = []string{"delivered", "failed", "not_applicable"}[rng.IntN(3)]
		default:
			o.Kind, o.ID = "reconcile", ""
			o.ActiveGrace, o.DeliveryGrace = 3, 3
			o.DryRun = rng.IntN(4) == 0
		}
		ops = append(ops, o)
	}
	return ops
}
