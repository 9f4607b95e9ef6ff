//go:build linux || darwin

package ledger

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSnapshotSourceChanged changes the file between the two reads of
// every attempt: the read-only open gives up with StateConflict.
func TestSnapshotSourceChanged(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	attempts := 0
	betweenSnapshotReads = func(path string) {
		attempts++
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 4096))
		f.Close()
	}
	defer func() { betweenSnapshotReads = nil }()
	pauses := recordPauses(t)
	_, err := Open(p, Options{ReadOnly: true})
	wantClass(t, err, ErrStateConflict)
	if attempts != len(readOnlyPauses)+1 || len(*pauses) != len(readOnlyPauses) {
		t.Fatalf("attempts %d, pauses %v", attempts, *pauses)
	}
}

// recordPauses replaces the pause between read-only attempts with a
// recorder for the test's duration, so retries cost no time.
func recordPauses(t *testing.T) *[]time.Duration {
	var got []time.Duration
	readOnlyPause = func(d time.Duration) { got = append(got, d) }
	t.Cleanup(func() { readOnlyPause = time.Sleep })
	return &got
}

// TestReadOnlyRetryBounded: the pauses between read-only attempts grow
// and stay far below the default busy timeout.
func TestReadOnlyRetryBounded(t *testing.T) {
	var total time.Duration
	for i, d := range readOnlyPauses {
		if d <= 0 || (i > 0 && d <= readOnlyPauses[i-1]) {
			t.Fatalf("pauses %v", readOnlyPauses)
		}
		total += d
	}
	if total > defaultBusyTimeoutMS*time.Millisecond/10 {
		t.Fatalf("pauses add up to %v", total)
	}
}

// TestReadOnlyPersistentSidecars: a rollback journal or half a WAL pair
// that outlasts every retry fails closed with StateConflict after the
// last one, leaving the files as they were; one that a writer clears
// during the retries does not fail.
func TestReadOnlyPersistentSidecars(t *testing.T) {
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		t.Run(suffix, func(t *testing.T) {
			p := newLedgerFile(t, privateDir(t))
			if err := os.WriteFile(p+suffix, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			before := fileSHA(t, p)
			pauses := recordPauses(t)
			_, err := Open(p, Options{ReadOnly: true})
			wantClass(t, err, ErrStateConflict)
			if len(*pauses) != len(readOnlyPauses) {
				t.Fatalf("pauses %v", *pauses)
			}
			if fileSHA(t, p) != before {
				t.Fatal("files changed")
			}
			if data, err := os.ReadFile(p + suffix); err != nil || string(data) != "x" {
				t.Fatal("sidecar changed")
			}

			// The sidecar goes away during the second pause: the open
			// succeeds on the third attempt.
			readOnlyPause = func(time.Duration) {
				*pauses = append(*pauses, 0)
				if len(*pauses) == len(readOnlyPauses)+2 {
					os.Remove(p + suffix)
				}
			}
			l, err := Open(p, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
		})
	}
}

// TestSnapshotRetrySucceeds changes the file only during the first
// attempt: the second attempt reads a stable copy (divergence L4).
func TestSnapshotRetrySucceeds(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	attempts := 0
	betweenSnapshotReads = func(path string) {
		attempts++
		if attempts == 1 {
			now := int64(attempts)
			os.Chtimes(path, unixTime(now), unixTime(now))
		}
	}
	defer func() { betweenSnapshotReads = nil }()
	l, err := Open(p, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if attempts != 2 {
		t.Fatalf("attempts %d", attempts)
	}
	if rep, err := l.Doctor(); err != nil || !rep.Healthy {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
}

func TestSnapshotTooLarge(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	if err := os.Truncate(p, maxSnapshotBytes+4096); err != nil {
		t.Fatal(err)
	}
	_, err := Open(p, Options{ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
}

// TestReadOnlyNeedsWAL: a rollback-journal database is refused read-only
// and left as it was.
func TestReadOnlyNeedsWAL(t *testing.T) {
	dir := privateDir(t)
	p := filepath.Join(dir, "plain.sqlite")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, ddl := range schemaDDL {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	os.Chmod(p, 0o600)
	before := fileSHA(t, p)
	_, err = Open(p, Options{ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
	if fileSHA(t, p) != before {
		t.Fatal("file changed")
	}
}

// TestSnapshotScrubbed reads the in-memory copy back after the scrub that
// Close runs: no task id may be left in it, neither in live pages nor in
// freed ones.
func TestSnapshotScrubbed(t *testing.T) {
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	w, err := Open(p, Options{Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 50; i++ {
		task, err := w.Create(CreateParams{DeliveryRequired: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	w.Close()
	l, err := Open(p, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.inMemory {
		t.Fatal("not an in-memory snapshot")
	}
	image := func() []byte {
		var b []byte
		err := l.conn.Raw(func(dc any) error {
			var err error
			b, err = dc.(interface{ Serialize() ([]byte, error) }).Serialize()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Contains(image(), []byte(ids[0])) {
		t.Fatal("the copy does not hold the ids to begin with")
	}
	l.scrubMemory()
	after := image()
	for _, id := range ids {
		if bytes.Contains(after, []byte(id)) {
			t.Fatalf("id %d survived the scrub", len(id))
		}
	}
}
