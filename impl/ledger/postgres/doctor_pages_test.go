package postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// statementTracer counts the statements of a connection while on, the
// most rows one of them answered, and the live heap after each (a
// collection at every statement's end: what the reader still holds).
type statementTracer struct {
	on         bool
	statements int
	maxRows    int64
	peakHeap   uint64
}

func (s *statementTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (s *statementTracer) TraceQueryEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	if !s.on {
		return
	}
	s.statements++
	s.maxRows = max(s.maxRows, d.CommandTag.RowsAffected())
	s.peakHeap = max(s.peakHeap, liveHeap())
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestDoctorReadsInPages: the server doctor and metrics hold a page of
// tasks, not the ledger, and no statement of theirs answers more than a
// page of rows. Two ledgers, of 9,007 and 36,007 tasks (doctorSequence's
// tree, then copies of its root, of a child, each copy under a copy of
// the root, and of a queued task, which metrics examines), get doctor
// and metrics through a connection that counts: the most rows a statement
// answered stays at a page (4,096) at both sizes, and the live heap at
// the ends of the statements grows by less than 4 MiB from the smaller to
// the larger. The larger one's doctor is the SQLite engine's, byte for
// byte, on its backup.
func TestDoctorReadsInPages(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	conn := direct(t, url)
	type measure struct {
		statements int
		maxRows    int64
		grew       uint64
		rep        ledger.DoctorReport
	}
	measureAt := func(copies int) measure {
		schema := fmt.Sprintf("pages_%d", copies)
		now := 1_000_000.0
		l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema, testClock: func() float64 { return now }})
		doctorSequence(t, l, &now)
		cloneTask(t, conn, schema, poolID(0), 0x01000000, copies, "NULL")
		cloneTask(t, conn, schema, poolID(1), 0x02000000, copies, fmt.Sprintf(sqlID, "(16777216 + k)"))
		cloneTask(t, conn, schema, poolID(6), 0x03000000, copies, "NULL") // queued: metrics examines them
		tr := &statementTracer{}
		traced := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true}, settings{schema: schema, tracer: tr})
		base := liveHeap()
		tr.on = true
		rep, err := traced.DoctorContext(ctx)
		if err == nil {
			var m ledger.MetricsReport
			m, err = ledgerrows.MetricsSeconds(ctx, traced, 600, 600)
			if m.Doctor.TaskCount != rep.TaskCount || !m.StuckKnown {
				t.Fatalf("metrics of %d copies: %+v", copies, m)
			}
		}
		tr.on = false
		if err != nil || !rep.Healthy || rep.TaskCount != 7+3*copies {
			t.Fatalf("doctor of %d copies: %s, %v", copies, reportJSON(t, rep), err)
		}
		m := measure{statements: tr.statements, maxRows: tr.maxRows, rep: rep}
		if tr.peakHeap > base {
			m.grew = tr.peakHeap - base
		}
		t.Logf("%d tasks: %d statements, at most %d rows each, live heap up to %d bytes above the start", rep.TaskCount, m.statements, m.maxRows, m.grew)
		return m
	}
	small, large := measureAt(3000), measureAt(12000)
	for _, m := range []measure{small, large} {
		if m.maxRows > 4096 {
			t.Errorf("a statement of the doctor answered %d rows (%d tasks); a page is 4,096", m.maxRows, m.rep.TaskCount)
		}
	}
	if large.grew > small.grew+4<<20 {
		t.Errorf("the doctor's live heap grew by %d bytes at %d tasks, %d at %d: not flat", large.grew, large.rep.TaskCount, small.grew, small.rep.TaskCount)
	}
	if large.statements <= small.statements {
		t.Errorf("%d statements at %d tasks, %d at %d: the pages are not read one by one", large.statements, large.rep.TaskCount, small.statements, small.rep.TaskCount)
	}

	server := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true}, settings{schema: "pages_12000"})
	copyPath := filepath.Join(t.TempDir(), "copy.sqlite")
	if _, err := server.Backup(copyPath); err != nil {
		t.Fatal(err)
	}
	file, err := ledger.Open(copyPath, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	want, err := file.Doctor()
	if err != nil || reportJSON(t, want) != reportJSON(t, large.rep) {
		t.Fatalf("doctor on the server\n%s\non its SQLite copy\n%s (%v)", reportJSON(t, large.rep), reportJSON(t, want), err)
	}
}
