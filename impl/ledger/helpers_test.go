package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
)

// fixtureDir holds the reference ledger's recorded files.
var fixtureDir = testfixtures.Path("ledger")

// requireFixtures skips when the shared fixtures are not on this machine
// (and fails under CI, where they must be).
func requireFixtures(t *testing.T) {
	t.Helper()
	testfixtures.Dir(t, "ledger")
}

// privateDir returns a fresh 0700 directory.
func privateDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "p")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// copyFixture copies NAME.sqlite into a private directory with mode 0600.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	requireFixtures(t)
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(privateDir(t), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func fileSHA(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// reportJSON renders a DoctorReport as the reference prints it: compact,
// keys sorted. Test-only; the CLI owns the production encoder.
func reportJSON(r DoctorReport) string {
	fields := map[string]string{
		"healthy":                       strconv.FormatBool(r.Healthy),
		"quick_check":                   strconv.Quote(map[bool]string{true: "ok", false: "failed"}[r.QuickCheckOK]),
		"schema_version":                strconv.Itoa(r.SchemaVersion),
		"schema_ok":                     strconv.FormatBool(r.SchemaOK),
		"task_count":                    strconv.Itoa(r.TaskCount),
		"event_count":                   strconv.Itoa(r.EventCount),
		"task_status_counts":            countsJSON(r.TaskStatusCounts),
		"delivery_status_counts":        countsJSON(r.DeliveryStatusCounts),
		"orphan_count":                  strconv.Itoa(r.OrphanCount),
		"parent_cycle_count":            strconv.Itoa(r.ParentCycleCount),
		"foreign_key_error_count":       strconv.Itoa(r.ForeignKeyErrorCount),
		"state_inconsistency_count":     strconv.Itoa(r.StateInconsistencyCount),
		"timestamp_inconsistency_count": strconv.Itoa(r.TimestampInconsistencyCount),
		"event_inconsistency_count":     strconv.Itoa(r.EventInconsistencyCount),
		"doctor_error_count":            strconv.Itoa(r.DoctorErrorCount),
	}
	return objectJSON(fields)
}

func countsJSON[K ~string](m map[K]int) string {
	f := map[string]string{}
	for k, v := range m {
		f[string(k)] = strconv.Itoa(v)
	}
	return objectJSON(f)
}

func objectJSON(fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Quote(k) + ":" + fields[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func reconcileJSON(r ReconcileReport) string {
	return objectJSON(map[string]string{
		"active_examined":           strconv.Itoa(r.ActiveExamined),
		"applied":                   strconv.FormatBool(r.Applied),
		"deliveries_failed":         strconv.Itoa(r.DeliveriesFailed),
		"deliveries_not_applicable": strconv.Itoa(r.DeliveriesNotApplicable),
		"dry_run":                   strconv.FormatBool(r.DryRun),
		"fresh_active_retained":     strconv.Itoa(r.FreshActiveRetained),
		"pending_delivery_examined": strconv.Itoa(r.PendingDeliveryExamined),
		"pending_delivery_retained": strconv.Itoa(r.PendingDeliveryRetained),
		"tasks_timed_out":           strconv.Itoa(r.TasksTimedOut),
	})
}

// fixtureRecord is the part of NAME.expected.json the tests use.
type fixtureRecord struct {
	SHA256 string `json:"sha256"`
	Runs   []struct {
		About string `json:"about"`
		Steps []struct {
			Argv   []string `json:"argv"`
			RC     int      `json:"rc"`
			Stdout string   `json:"stdout"`
		} `json:"steps"`
	} `json:"runs"`
	ReadOnlyDoctor struct {
		OK     bool   `json:"ok"`
		Report string `json:"report"`
		Error  string `json:"error"`
	} `json:"api_read_only_doctor"`
}

func loadRecord(t *testing.T, name string) fixtureRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, strings.TrimSuffix(name, ".sqlite")+".expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec fixtureRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// fixedClock returns a Clock that always reads now, Unix seconds a Time
// holds exactly.
func fixedClock(now float64) Clock {
	at := timeAt(now)
	return func() time.Time { return at }
}

// timeAt is Unix seconds a Time holds exactly, as a Time.
func timeAt(seconds float64) time.Time {
	at, ok := floatseconds.Time(seconds)
	if !ok || floatseconds.UnixSeconds(at) != seconds {
		panic("timeAt: no Time holds this time exactly")
	}
	return at
}

// timePtr is timeAt(seconds), for an optional field.
func timePtr(seconds float64) *time.Time {
	at := timeAt(seconds)
	return &at
}

// withClockSeconds is o reading the time from clock in float seconds, the
// stored form, as the command line's test clock does.
func withClockSeconds(o Options, clock func() float64) Options {
	o.SetClockSeconds(clock)
	return o
}

// row is the row task was read from: its times as stored.
func row(task Task) taskRow {
	if task.stored == nil {
		panic("row: the task was not read from a ledger")
	}
	return *task.stored
}

// unixTime converts whole Unix seconds to a time.Time for os.Chtimes.
func unixTime(sec int64) time.Time { return time.Unix(sec, 0) }

// seedBenchmark creates a ledger at path holding benchseed's benchmark
// workload of n tasks stamped around now.
func seedBenchmark(path string, n int, now float64) error {
	l, err := Open(path, Options{AllowExternalACL: onWindows, Clock: fixedClock(now)})
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	return benchseed.LedgerRows(path, n, now)
}
