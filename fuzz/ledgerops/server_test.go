package ledgerops

import (
	"context"
	"database/sql"
	"os"
	"reflect"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, to read the rows with ledgerrows

	"github.com/stateguard/stateguard/impl/ledger/postgres"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	model "github.com/stateguard/stateguard/model/ledger"
)

// TestMain lets the server target share one throwaway PostgreSQL cluster.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// FuzzLedgerSequenceOnServer runs FuzzLedgerSequence's programs on the
// PostgreSQL engine: each input on an emptied ledger, with the program's
// clock as the ledger's FixedClock. Oracle after every step: the same
// answers as the model; the schema's task rows equal the model's and its
// events too, compared in order (the server's identity column skips the
// numbers a rolled-back transaction drew, so the sequence numbers are the
// model's only up to order); the model's checker finds the rows healthy;
// the doctor is healthy and its counts equal the checker's.
func FuzzLedgerSequenceOnServer(f *testing.F) {
	for _, s := range sequenceSeeds {
		f.Add([]byte(s))
	}
	url := pgtest.Database(f)
	ctx := context.Background()
	// One ledger and one reader for every input of this process, emptied
	// before each: making a schema per input took most of an input's time.
	var seq *sequence
	opts := postgres.Options{
		Schema: "seq",
		NewID:  func() (string, error) { return seq.newID() },
	}
	// The program's clock in the reference's float seconds.
	opts.SetFixedClockSeconds(func() float64 { return seq.clock() })
	l, err := postgres.Open(ctx, url, opts)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { l.Close() })
	reader, err := sql.Open("pgx", url+"&search_path=seq")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { reader.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		seq = newSequence(t, data)
		if _, err := reader.Exec(`TRUNCATE task_events, tasks RESTART IDENTITY`); err != nil {
			t.Fatal(err)
		}
		seq.run(l, func() {
			tasks, events, err := readRows(reader)
			if err != nil {
				seq.fail("read rows: %v", err)
			}
			for i := range events {
				events[i].Sequence = int64(i + 1)
			}
			if want := seq.m.Tasks(); !reflect.DeepEqual(tasks, want) {
				seq.fail("task rows differ\nledger %+v\nmodel  %+v", tasks, want)
			}
			if want := seq.m.Events(); !reflect.DeepEqual(events, want) {
				seq.fail("events differ\nledger %+v\nmodel  %+v", events, want)
			}
			counts := model.Check(tasks, events)
			if !counts.Healthy() {
				seq.fail("the checker finds the ledger's rows unhealthy: %+v", counts)
			}
			doc, err := l.Doctor()
			if err != nil {
				seq.fail("doctor: %v", err)
			}
			if !doc.Healthy || !doc.QuickCheckOK || !doc.SchemaOK || doc.DoctorErrorCount != 0 || !sameCounts(doc, counts) {
				seq.fail("doctor %+v\nchecker %+v", doc, counts)
			}
		})
	})
}
