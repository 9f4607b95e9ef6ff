package ledger_test

import (
	"context"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/stateguard/stateguard/impl/ledger"
)

func pruneCounts(r ledger.PruneReport) ledger.PruneReport {
	r.DryRun, r.Applied = false, false
	return r
}

// TestPruneLaws: over reachable ledgers (build's programs, sometimes
// settled by a reconcile with no grace first), at any cutoff and batch
// size,
//
//   - a dry run, through a read-only open (the file's bytes, mode and
//     time unchanged; on a server every row and its xmin) and through a
//     writable one (the file and its WAL; the rows), reports exactly what
//     the apply then removes;
//   - a second apply at the same cutoff removes nothing;
//   - afterwards the doctor is healthy (no orphan, no broken chain) and
//     the ledger holds exactly the tasks the dry run did not count.
//
// On both engines (forEachEngine). Seeded by -props.seed, sized by
// -props.n (a quarter of it on the server); a failure prints the program.
func TestPruneLaws(t *testing.T) { forEachEngine(t, pruneLaws) }

func pruneLaws(t *testing.T, e *engineRun) {
	props := gopter.NewProperties(lawParams(e))
	cases, removing := 0, 0
	defer func() {
		t.Logf("prune removed something in %d of %d cases", removing, cases)
		if *propsSeed == 1 && cases >= 20 && 4*removing < cases {
			t.Errorf("prune removed something in only %d of %d cases: the generator has gone slack", removing, cases)
		}
	}()
	props.Property("a dry run reports what the apply removes; a second apply removes nothing", prop.ForAll(
		func(prog []int, settle bool, advance float64, batch int) string {
			w, err := e.buildWorld(prog)
			if err != nil {
				return "build: " + err.Error()
			}
			if settle {
				l, err := w.open(false)
				if err != nil {
					return err.Error()
				}
				w.clock.now += 1e5
				ledgerrows.ReconcileSeconds(context.Background(), l, 0, 0, false)
				if err := w.close(l); err != nil {
					return err.Error()
				}
			}
			cutoff := w.clock.now + advance
			opts := ledgerrows.PruneSeconds(cutoff, true)
			before, err := w.seal(false)
			if err != nil {
				return err.Error()
			}
			ro, err := w.open(true)
			if err != nil {
				return "read-only open: " + err.Error()
			}
			roRep, roErr := ro.Prune(opts)
			w.close(ro)
			if after, err := w.seal(false); err != nil || after != before {
				return fmt.Sprintf("the read-only dry run changed the ledger (%v) in %s", err, programString(prog))
			}
			l, err := w.open(false)
			if err != nil {
				return "open: " + err.Error()
			}
			defer w.close(l)
			ledger.SetPruneBatch(l, batch, batch)
			tasksBefore := len(listAll(l))
			openBefore, err := w.seal(true)
			if err != nil {
				return err.Error()
			}
			rwRep, rwErr := l.Prune(opts)
			if openAfter, err := w.seal(true); err != nil || openAfter != openBefore {
				return fmt.Sprintf("the writable dry run changed the ledger (%v) in %s", err, programString(prog))
			}
			opts.DryRun = false
			applied, applyErr := l.Prune(opts)
			if roErr != nil || rwErr != nil || applyErr != nil {
				return fmt.Sprintf("errors %v / %v / %v in %s", roErr, rwErr, applyErr, programString(prog))
			}
			cases++
			if applied.TreesRemoved > 0 {
				removing++
			}
			if pruneCounts(roRep) != pruneCounts(applied) || pruneCounts(rwRep) != pruneCounts(applied) || !applied.Applied || !roRep.DryRun {
				return fmt.Sprintf("dry runs %+v / %+v, apply %+v in %s", roRep, rwRep, applied, programString(prog))
			}
			again, err := l.Prune(opts)
			if err != nil || again.TreesRemoved != 0 || again.TasksRemoved != 0 || again.EventsRemoved != 0 ||
				again.TreesExamined != applied.TreesRetained {
				return fmt.Sprintf("second apply %+v (%v) after %+v in %s", again, err, applied, programString(prog))
			}
			doc, err := l.Doctor()
			if err != nil || !doc.Healthy {
				return fmt.Sprintf("doctor after prune: %+v %v in %s", doc, err, programString(prog))
			}
			if left := len(listAll(l)); left != tasksBefore-applied.TasksRemoved || doc.TaskCount != left {
				return fmt.Sprintf("%d tasks before, %d removed, %d left", tasksBefore, applied.TasksRemoved, left)
			}
			return ""
		},
		genProgram, gen.Bool(), gen.OneConstOf(-1e5, -600.0, 0.0, 0.5, 600.0, 1e5, 1e7), gen.IntRange(0, 3),
	))
	props.TestingRun(t)
}

// listAll returns every task of l.
func listAll(l *ledger.Ledger) []ledger.Task {
	var out []ledger.Task
	for task, err := range l.ListAll(ledger.ListFilter{Limit: ledger.ListMaxLimit}) {
		if err != nil {
			return nil
		}
		out = append(out, task)
	}
	return out
}
