package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// openRaces is how many fresh ledgers TestOpenRaceOnFreshPath races two
// Opens on; LEDGER_OPEN_RACES raises it (100 races
// with no failure is the bar for a change to the first open).
func openRaces(t *testing.T) int {
	n := 50
	if s := os.Getenv("LEDGER_OPEN_RACES"); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			t.Fatalf("LEDGER_OPEN_RACES must be a positive count")
		}
	}
	return n
}

// TestOpenRaceOnFreshPath starts two goroutines opening the same ledger
// path that does not exist yet, as workers a supervisor starts together
// do, and has each create a task. Both opens must succeed: the file that
// the other opener created meanwhile is an existing ledger, not a
// conflict, and the lock the other holds while it sets the ledger up
// (WAL, schema) is waited for within the busy timeout. Afterwards the
// ledger is healthy and holds both tasks.
//
// Under Wine about 1 race in 300 failed ("database file is not a valid
// ledger", SQLite's CANTOPEN; or an I/O error, DELETE_NOENT): traced, the
// creator's switch to WAL had committed and deleted its rollback journal,
// yet the journal's name still opened (Wine keeps a deleted file's name
// openable while another handle holds it), so the other opener's SQLite
// took it for a hot journal, rolled the committed header back to the
// empty file and then failed to delete the journal that was gone by then.
// Windows refuses opens of a deleted name, so that cannot happen there:
// the test is gated by DeletedNamesUnopenable.
func TestOpenRaceOnFreshPath(t *testing.T) {
	platformtest.DeletedNamesUnopenable(t)
	races := openRaces(t)
	failures := 0
	for i := 0; i < races; i++ {
		p := filepath.Join(privateDir(t), "fresh.sqlite")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		for g := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(5000)})
				if err != nil {
					errs[g] = err
					return
				}
				defer l.Close()
				_, errs[g] = l.Create(CreateParams{})
			}()
		}
		close(start)
		wg.Wait()
		for g, err := range errs {
			if err != nil {
				failures++
				t.Errorf("race %d, opener %d: %v", i, g, err)
			}
		}
		if failures > 0 {
			continue
		}
		l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := l.Doctor()
		l.Close()
		if err != nil || !rep.Healthy || rep.TaskCount != 2 {
			t.Fatalf("race %d: %s %v", i, reportJSON(rep), err)
		}
	}
	t.Logf("%d races of two Opens, %d failures", races, failures)
}

// plantBeforeCreate makes plant run once, right before Open creates the
// missing database file, as another opener starting at the same moment
// would create it.
func plantBeforeCreate(t *testing.T, plant func(path string)) {
	t.Helper()
	storageguard.Hooks.BeforeCreateFile = func(path string) {
		storageguard.Hooks.BeforeCreateFile = nil
		plant(path)
	}
	t.Cleanup(func() { storageguard.Hooks.BeforeCreateFile = nil })
}

// TestOpenOfFileThatAppeared: when the database file appears between
// Open's look at the path and its exclusive create, Open carries on as an
// open of the existing file that is there now, with every check an
// existing file gets: another opener's ledger or its still empty file is
// opened, a planted link or a file that is no ledger is refused as it
// would be had it been there from the start.
func TestOpenOfFileThatAppeared(t *testing.T) {
	const id = "00000000-0000-4000-8000-00000000a11e"
	cases := []struct {
		name  string
		plant func(t *testing.T, path string)
		check func(t *testing.T, path string, l *Ledger, err error)
	}{
		{"another opener's ledger", func(t *testing.T, path string) {
			other, err := Open(path, Options{AllowExternalACL: onWindows, Clock: fixedClock(100)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.Create(CreateParams{TaskID: id}); err != nil {
				t.Fatal(err)
			}
			other.Close()
		}, func(t *testing.T, path string, l *Ledger, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Get(id); err != nil {
				t.Fatalf("the other opener's task: %v", err)
			}
		}},
		{"another opener's empty file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, path string, l *Ledger, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil || platformtest.HasPOSIXModes && fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode not tightened: %v %v", fi.Mode(), err)
			}
			if l.SchemaVersion() != 2 {
				t.Fatalf("schema version %d", l.SchemaVersion())
			}
		}},
		{"a symlink", func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "elsewhere")
			if err := os.WriteFile(target, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, path string, l *Ledger, err error) {
			if !errors.Is(err, ErrInvalidInput) || Reason(err) != "database path is not a regular file" {
				t.Fatalf("got %v", err)
			}
		}},
		{"a file that is no ledger", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("not a database, only text, long enough to be no header"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, path string, l *Ledger, err error) {
			if !errors.Is(err, ErrStateConflict) || Reason(err) != "database file is not a valid ledger" {
				t.Fatalf("got %v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "a symlink" {
				platformtest.ReparsePoints(t)
			}
			path := filepath.Join(privateDir(t), "fleet.sqlite")
			plantBeforeCreate(t, func(path string) { c.plant(t, path) })
			l, err := Open(path, Options{AllowExternalACL: onWindows, Clock: fixedClock(200)})
			if storageguard.Hooks.BeforeCreateFile != nil {
				t.Fatal("Open never came to create the file")
			}
			if l != nil {
				defer l.Close()
			}
			c.check(t, path, l, err)
		})
	}
}

// countSetupWaits counts retryBusy's waits, running then (if not nil)
// at each.
func countSetupWaits(t *testing.T, then func()) *int {
	waits := new(int)
	hooks.onSetupBusy = func() {
		*waits++
		if then != nil {
			then()
		}
	}
	t.Cleanup(func() { hooks.onSetupBusy = nil })
	return waits
}

// TestOpenWaitsForSetupLock: SQLite answers the switch of a fresh file to
// WAL busy at once, without its busy handler, while another connection
// holds the write lock (as a second worker setting the same fresh ledger
// up does). Open waits for the lock as any write does: released during
// the wait, the open succeeds.
func TestOpenWaitsForSetupLock(t *testing.T) {
	path := filepath.Join(privateDir(t), "fleet.sqlite")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := holdWriteLock(t, path)
	defer once.Do(release)
	waits := countSetupWaits(t, func() { once.Do(release) })
	l, err := Open(path, Options{AllowExternalACL: onWindows})
	if err != nil {
		t.Fatalf("open beside the setup lock: %v", err)
	}
	defer l.Close()
	if *waits == 0 {
		t.Fatal("the switch to WAL never met the lock: the test tests nothing")
	}
	if l.SchemaVersion() != 2 {
		t.Fatalf("schema version %d", l.SchemaVersion())
	}
}

// TestOpenBusyAfterSetupTimeout: a setup lock held past the busy timeout
// is ErrBusy, after waits that add up to the timeout, not before.
func TestOpenBusyAfterSetupTimeout(t *testing.T) {
	path := filepath.Join(privateDir(t), "fleet.sqlite")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer holdWriteLock(t, path)()
	waits := countSetupWaits(t, nil)
	_, err := Open(path, Options{AllowExternalACL: onWindows, BusyTimeout: 40 * time.Millisecond})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("got %v, want ErrBusy", err)
	}
	// 1 + 2 + 5 + 10 + 15 ms, then the 7 ms left of the 40 ms timeout.
	if *waits != 6 {
		t.Fatalf("%d waits, want 6", *waits)
	}
}
