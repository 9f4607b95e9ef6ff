package ledgerops

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/ledgerrows"
	"github.com/stateguard/stateguard/internal/testfixtures"
	model "github.com/stateguard/stateguard/model/ledger"
)

// onWindows acknowledges the external ACL there (spec 11.3); elsewhere the
// flag is false and POSIX modes are checked.
const onWindows = runtime.GOOS == "windows"

// classOf names an error's contract class (model and ledger use the same
// words).
func classOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ledger.ErrInvalidInput), errors.Is(err, model.ErrInvalidInput):
		return "InvalidInput"
	case errors.Is(err, ledger.ErrTaskNotFound), errors.Is(err, model.ErrTaskNotFound):
		return "TaskNotFound"
	case errors.Is(err, ledger.ErrStateConflict), errors.Is(err, model.ErrStateConflict):
		return "StateConflict"
	}
	return "other(" + err.Error() + ")"
}

func toModel(t ledger.Task) model.Task {
	return model.Task{
		ID: t.ID, ParentID: t.ParentID, Status: string(t.Status), DeliveryStatus: string(t.DeliveryStatus),
		DeliveryRequired: t.DeliveryRequired, PayloadHash: t.PayloadHash, TimeoutSeconds: t.TimeoutSeconds,
		CreatedAt: t.CreatedAt, StartedAt: t.StartedAt, UpdatedAt: t.UpdatedAt, EndedAt: t.EndedAt,
		DeadlineAt: t.DeadlineAt, DeliveryUpdatedAt: t.DeliveryUpdatedAt, TerminalCode: t.TerminalCode,
		DeliveryCode: t.DeliveryCode, Version: t.Version,
	}
}

// privateDB makes a 0700 directory holding a 0600 copy of data (nil: no
// file) and returns the database path.
func privateDB(t *testing.T, data []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ledger")
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

// readRows reads the stored rows as the model's values.
var readRows = ledgerrows.Read

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
