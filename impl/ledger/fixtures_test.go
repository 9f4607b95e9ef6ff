package ledger

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// earlyReport is the doctor's answer on a schema that is not exactly v2.
func earlyReport(version int) string {
	r := newDoctorReport()
	r.SchemaVersion = version
	r.DoctorErrorCount = 1
	return reportJSON(r)
}

// TestFixtureReadOnlyDoctor replays api_read_only_doctor on every fixture.
// Where the reference raised StateConflict on a damaged schema, the Go
// doctor returns the early report instead (divergence L5).
func TestFixtureReadOnlyDoctor(t *testing.T) {
	requireFixtures(t)
	names, _ := filepath.Glob(filepath.Join(fixtureDir, "*.sqlite"))
	if len(names) == 0 {
		t.Fatal("no fixtures")
	}
	l5 := map[string]string{
		"broken-extra-meta-key.sqlite": earlyReport(2),
		"broken-fingerprint.sqlite":    earlyReport(2),
		"v1-unsafe.sqlite":             earlyReport(1),
	}
	for _, full := range names {
		name := filepath.Base(full)
		t.Run(name, func(t *testing.T) {
			p := copyFixture(t, name)
			before := fileSHA(t, p)
			rec := loadRecord(t, name)
			l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(1e9)})
			if err != nil {
				t.Fatalf("read-only open: %v", err)
			}
			rep, err := l.Doctor()
			if err != nil {
				t.Fatalf("doctor: %v", err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			want := rec.ReadOnlyDoctor.Report
			if w, ok := l5[name]; ok {
				if rec.ReadOnlyDoctor.OK {
					t.Fatalf("fixture changed: reference answered a report")
				}
				want = w
			}
			if got := reportJSON(rep); got != want {
				t.Errorf("doctor report\n got %s\nwant %s", got, want)
			}
			if after := fileSHA(t, p); after != before || before != rec.SHA256 {
				t.Errorf("file bytes changed")
			}
			assertNoSidecars(t, p)
		})
	}
}

func assertNoSidecars(t *testing.T, p string) {
	t.Helper()
	for _, s := range storageguard.SidecarSuffixes {
		if _, err := storageguard.Lstat(p + s); err == nil {
			t.Errorf("sidecar %s left behind", s)
		}
	}
}

// TestFixtureDryRunCounts replays the recorded reconcile --dry-run runs on
// small-v2 and v1-safe at a fixed clock inside 2001..2317.
func TestFixtureDryRunCounts(t *testing.T) {
	requireFixtures(t)
	graces := map[string][2]float64{
		"reconcile --dry-run, default graces (600/600)":                 {600, 600},
		"reconcile --dry-run, graces 0/0":                               {0, 0},
		"reconcile --dry-run, graces 1e10/1e10 (only deadlines decide)": {1e10, 1e10},
	}
	rec := loadRecord(t, "small-v2.sqlite")
	checked := 0
	for _, run := range rec.Runs {
		g, ok := graces[run.About]
		if !ok {
			continue
		}
		for _, name := range []string{"small-v2.sqlite", "v1-safe.sqlite"} {
			for _, now := range []float64{978307200 + 5000, 1.7e9, 1e10} {
				p := copyFixture(t, name)
				before := fileSHA(t, p)
				l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(now)})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := l.reconcileFloat(g[0], g[1], true)
				l.Close()
				if err != nil {
					t.Fatalf("%s: %v", run.About, err)
				}
				want := run.Steps[0].Stdout
				got := `{"ok":true,"reconcile":` + reconcileJSON(rep) + "}\n"
				if got != want {
					t.Errorf("%s %s now=%v\n got %s\nwant %s", name, run.About, now, got, want)
				}
				if fileSHA(t, p) != before {
					t.Errorf("dry run changed the file")
				}
				checked++
			}
		}
	}
	if checked != 18 {
		t.Fatalf("checked %d runs, want 18", checked)
	}
}

// TestFixtureMigration: v1-safe migrates on a writable open and is then
// healthy; v1-unsafe is refused with its bytes untouched.
func TestFixtureMigration(t *testing.T) {
	requireFixtures(t)
	p := copyFixture(t, "v1-safe.sqlite")
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
	if err != nil {
		t.Fatalf("open v1-safe: %v", err)
	}
	rep, err := l.Doctor()
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reportJSON(rep), loadRecord(t, "small-v2.sqlite").ReadOnlyDoctor.Report; got != want {
		t.Errorf("migrated doctor\n got %s\nwant %s", got, want)
	}

	u := copyFixture(t, "v1-unsafe.sqlite")
	before := fileSHA(t, u)
	_, err = Open(u, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
	if !errors.Is(err, ErrStateConflict) {
		t.Fatalf("open v1-unsafe: %v, want StateConflict", err)
	}
	if fileSHA(t, u) != before {
		t.Errorf("refused v1 file changed")
	}
	assertNoSidecars(t, u)

	for _, bad := range []string{"broken-fingerprint.sqlite", "broken-extra-meta-key.sqlite"} {
		b := copyFixture(t, bad)
		before := fileSHA(t, b)
		if _, err := Open(b, Options{AllowExternalACL: onWindows}); !errors.Is(err, ErrStateConflict) {
			t.Errorf("%s: writable open: %v, want StateConflict", bad, err)
		}
		if fileSHA(t, b) != before {
			t.Errorf("%s: refused file changed", bad)
		}
	}
}
