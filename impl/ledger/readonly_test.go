//go:build linux || darwin

package ledger

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadOnlySourceChanged changes the file during the read of every
// attempt: the read-only open gives up with StateConflict.
func TestReadOnlySourceChanged(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	attempts := 0
	hooks.duringReadOnlyRead = func(path string) {
		attempts++
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 4096))
		f.Close()
	}
	defer func() { hooks.duringReadOnlyRead = nil }()
	pauses := recordPauses(t)
	_, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	wantClass(t, err, ErrStateConflict)
	if attempts != len(readOnlyPauses)+1 || len(*pauses) != len(readOnlyPauses) {
		t.Fatalf("attempts %d, pauses %v", attempts, *pauses)
	}
}

// recordPauses replaces the pause between read-only attempts with a
// recorder for the test's duration, so retries cost no time.
func recordPauses(t *testing.T) *[]time.Duration {
	var got []time.Duration
	hooks.readOnlyPause = func(d time.Duration) { got = append(got, d) }
	t.Cleanup(func() { hooks.readOnlyPause = time.Sleep })
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

// TestReadOnlyPersistentJournal: a rollback journal that outlasts every
// retry fails closed with StateConflict after the last one, leaving the
// files as they were; one that a writer clears during the retries does not
// fail. (A lone -wal or -shm is read: see readonly_crashstates_test.go.)
func TestReadOnlyPersistentJournal(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	if err := os.WriteFile(p+"-journal", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := fileSHA(t, p)
	pauses := recordPauses(t)
	_, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	wantClass(t, err, ErrStateConflict)
	if len(*pauses) != len(readOnlyPauses) {
		t.Fatalf("pauses %v", *pauses)
	}
	if fileSHA(t, p) != before {
		t.Fatal("files changed")
	}
	if data, err := os.ReadFile(p + "-journal"); err != nil || string(data) != "x" {
		t.Fatal("sidecar changed")
	}

	// The journal goes away during the second pause: the open succeeds on
	// the third attempt.
	hooks.readOnlyPause = func(time.Duration) {
		*pauses = append(*pauses, 0)
		if len(*pauses) == len(readOnlyPauses)+2 {
			os.Remove(p + "-journal")
		}
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

// TestReadOnlyRetrySucceeds changes the file only during the first
// attempt: the second attempt reads it unchanged (divergence L4).
func TestReadOnlyRetrySucceeds(t *testing.T) {
	p := newLedgerFile(t, privateDir(t))
	attempts := 0
	hooks.duringReadOnlyRead = func(path string) {
		attempts++
		if attempts == 1 {
			now := int64(attempts)
			os.Chtimes(path, unixTime(now), unixTime(now))
		}
	}
	defer func() { hooks.duringReadOnlyRead = nil }()
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
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
	_, err = Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	wantClass(t, err, ErrInvalidInput)
	if fileSHA(t, p) != before {
		t.Fatal("file changed")
	}
}
