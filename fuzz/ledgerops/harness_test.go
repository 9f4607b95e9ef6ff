package ledgerops

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"
	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
	model "github.com/stateguard/stateguard/model/ledger"
)

// onWindows acknowledges the external ACL there (spec 11.3); elsewhere the
// flag is false and POSIX modes are checked.
const onWindows = runtime.GOOS == "windows"

// privateDB makes a 0700 directory holding a 0600 copy of data (nil: no
// file) and returns the database path.
func privateDB(t *testing.T, data []byte) string {
	t.Helper()
	dir := filepath.Join(memdir.TempDir(t), "ledger")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tasks.sqlite")
	if data != nil {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// emptyLedger makes a fresh ledger once and returns its bytes, so that
// each input starts from a copy instead of creating the schema again (a
// ledger opened on it is the same empty v2 ledger; creation itself is
// tested in impl/ledger).
func emptyLedger(f *testing.F) []byte {
	path := filepath.Join(f.TempDir(), "template.sqlite")
	l, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows})
	if err != nil {
		f.Fatal(err)
	}
	if err := l.Close(); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := os.Lstat(path + "-wal"); err == nil {
		f.Fatal("the closed template ledger kept its -wal")
	}
	return b
}

func fixture(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(f, "ledger"), name))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// roURI is a read-only SQLite URI for path ('#', '?' and '%' escaped: fuzz
// sub-test directories are named seed#N).
func roURI(path string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")
	return "file:" + r.Replace(filepath.ToSlash(path)) + "?mode=ro"
}

// readRowsAt reads every task (by id) and event (by sequence) through its
// own SQLite connection, closed before it returns (no ledger is open then).
func readRowsAt(path string) ([]model.Task, []model.Event, error) {
	db, err := sql.Open("sqlite", roURI(path))
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	return readRows(db)
}

// readRows, toModel and classOf bring the ledger's stored rows, returned rows and errors
// into the model's terms.
var (
	readRows = ledgerrows.Read
	toModel  = ledgerrows.FromLedger
	classOf  = ledgerrows.Class
)

// textKeys turns the ledger's typed state keys into the checker's plain ones.
func textKeys[K ~string](m map[K]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

// doctorCounts is the doctor's report in the checker's shape.
func doctorCounts(d ledger.DoctorReport) model.Counts {
	return model.Counts{
		TaskCount: d.TaskCount, EventCount: d.EventCount,
		TaskStatusCounts: textKeys(d.TaskStatusCounts), DeliveryStatusCounts: textKeys(d.DeliveryStatusCounts),
		OrphanCount: d.OrphanCount, ParentCycleCount: d.ParentCycleCount, ForeignKeyErrorCount: d.ForeignKeyErrorCount,
		StateInconsistencyCount: d.StateInconsistencyCount, TimestampInconsistencyCount: d.TimestampInconsistencyCount,
		EventInconsistencyCount: d.EventInconsistencyCount,
	}
}

// sameCounts compares the doctor's counts with the checker's.
func sameCounts(d ledger.DoctorReport, c model.Counts) bool {
	return reflect.DeepEqual(doctorCounts(d), c)
}

func showTask(t model.Task) string {
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
	return fmt.Sprintf("{%s parent=%s %s/%s req=%v timeout=%s created=%v started=%s updated=%v ended=%s deadline=%s dupd=%v code=%s dcode=%s v=%d}",
		t.ID, s(t.ParentID), t.Status, t.DeliveryStatus, t.DeliveryRequired, f(t.TimeoutSeconds),
		t.CreatedAt, f(t.StartedAt), t.UpdatedAt, f(t.EndedAt), f(t.DeadlineAt), t.DeliveryUpdatedAt, s(t.TerminalCode), s(t.DeliveryCode), t.Version)
}

// dirNames lists the directory of path.
func dirNames(t *testing.T, path string) string {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}
