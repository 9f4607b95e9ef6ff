package ledgerops

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stateguard/stateguard/fuzz/internal/fuzzbytes"
	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
	model "github.com/stateguard/stateguard/model/ledger"
)

// TestJudgeDoctorHiddenCounts: a doctor that, on a ledger whose schema no
// edit touched, turns its event findings into a doctor error (still
// unhealthy, but with counts that differ from the checker's) must fail
// FuzzDamagedLedger's oracle. The gate on the doctor's own SchemaOK,
// QuickCheckOK and DoctorErrorCount let it through.
func TestJudgeDoctorHiddenCounts(t *testing.T) {
	base, err := os.ReadFile(filepath.Join(testfixtures.Dir(t, "ledger"), "small-v2.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	path := privateDB(t, base)
	d := damage(t, path, fuzzbytes.New([]byte("\x03\x00"))) // delete the first event
	if d.rowsErr != nil {
		t.Fatal(d.rowsErr)
	}
	counts := model.Check(d.tasks, d.events)
	if counts.EventInconsistencyCount == 0 {
		t.Fatalf("edits %q left no event finding: %+v", d.edits, counts)
	}
	ro, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: func() time.Time { return time.Unix(2e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ro.Doctor()
	ro.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := judgeDoctor(doc, counts, nil, false); err != nil {
		t.Fatalf("the real doctor: %v", err)
	}
	hidden := doc
	hidden.EventInconsistencyCount = 0
	hidden.DoctorErrorCount++
	if judgeDoctor(hidden, counts, nil, false) == nil {
		t.Fatalf("a doctor that reports event_inconsistency_count 0 (checker: %d) and a doctor error passed the oracle", counts.EventInconsistencyCount)
	}
}
