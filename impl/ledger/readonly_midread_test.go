//go:build linux || darwin

package ledger

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
)

// onRead installs hook as hooks.duringReadOnlyRead for the test and counts the
// read transactions it sees. A retry makes a new view, which reads the
// schema first: one read with one retry is three read transactions.
func onRead(t *testing.T, hook func(n int, path string)) *int {
	t.Helper()
	n := 0
	hooks.duringReadOnlyRead = func(path string) {
		n++
		hook(n, path)
	}
	t.Cleanup(func() { hooks.duringReadOnlyRead = nil })
	return &n
}

// withReadLocks runs the test with the OFD read locks on or off.
func withReadLocks(t *testing.T, on bool) {
	t.Helper()
	if on && !storageguard.HaveReadLocks {
		t.Skip("no OFD locks on this platform")
	}
	storageguard.Hooks.ReadLocks = on
	t.Cleanup(func() { storageguard.Hooks.ReadLocks = storageguard.HaveReadLocks })
}

// livePair makes a ledger whose -wal/-shm pair a live writer keeps (a
// second connection keeps the writer's close from checkpointing). It
// returns the path, the writer and that connection.
func livePair(t *testing.T) (string, *Ledger, *sql.DB) {
	t.Helper()
	p := newLedgerFile(t, privateDir(t))
	keeper, err := sql.Open("sqlite", fileURI(p, "mode=rw&_pragma=busy_timeout(0)"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keeper.Close() })
	keeper.SetMaxOpenConns(1)
	if _, err := keeper.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := w.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p + "-wal"); err != nil {
		t.Fatal("no -wal")
	}
	return p, w, keeper
}

// commitAndCheckpointInFirstRead makes the writer w commit a task, and
// keeper ask for a passive checkpoint, in the middle of the first read of
// a read-only ledger. It returns the count of reads and the number of
// frames the checkpoint copied into the database.
func commitAndCheckpointInFirstRead(t *testing.T, w *Ledger, keeper *sql.DB) (reads, backfilled *int) {
	backfilled = new(int)
	reads = onRead(t, func(n int, _ string) {
		if n != 1 {
			return
		}
		if _, err := w.Create(CreateParams{}); err != nil {
			t.Fatal(err)
		}
		var busy, logged int
		if err := keeper.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, backfilled); err != nil {
			t.Fatal(err)
		}
	})
	return reads, backfilled
}

// TestReadOnlyWriterCommitsAndCheckpointsDuringRead: while a doctor reads,
// a writer commits a task and asks for a checkpoint. With the read locks
// the checkpoint cannot copy pages into the database: the doctor's one
// read stands and reports the ledger as it was when the read began. The
// next read sees the new task.
func TestReadOnlyWriterCommitsAndCheckpointsDuringRead(t *testing.T) {
	withReadLocks(t, true)
	p, w, keeper := livePair(t)
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reads, backfilled := commitAndCheckpointInFirstRead(t, w, keeper)
	rep, err := r.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 2 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
	if *reads != 1 || *backfilled != 0 {
		t.Fatalf("%d reads, %d frames copied into the database under the read", *reads, *backfilled)
	}
	if rep, err = r.Doctor(); err != nil || rep.TaskCount != 3 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
}

// TestReadOnlyCheckpointDuringReadDetected: the same without the read
// locks (as on platforms without OFD locks): the checkpoint copies pages
// into the database under the read, the change is noticed after the read,
// and the retry reports the new state.
func TestReadOnlyCheckpointDuringReadDetected(t *testing.T) {
	withReadLocks(t, false)
	recordPauses(t)
	p, w, keeper := livePair(t)
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reads, backfilled := commitAndCheckpointInFirstRead(t, w, keeper)
	rep, err := r.reconcileFloat(600, 600, true)
	if err != nil || rep.ActiveExamined != 3 {
		t.Fatalf("%s %v", reconcileJSON(rep), err)
	}
	if *reads != 3 || *backfilled == 0 {
		t.Fatalf("%d reads, %d frames copied", *reads, *backfilled)
	}
}

// TestReadOnlyWriterSessionDuringDryRun: on a cleanly closed ledger, a
// whole writer session (open, create, close) runs during a dry run. The
// read lock on the database keeps the closing writer from checkpointing
// and deleting its -wal, so the read notices the new sidecars and the
// retry reads them: the dry run reports the new task. Without the locks
// the change to the database file itself is noticed.
func TestReadOnlyWriterSessionDuringDryRun(t *testing.T) {
	for _, locks := range []bool{true, false} {
		t.Run(map[bool]string{true: "locks", false: "no-locks"}[locks], func(t *testing.T) {
			withReadLocks(t, locks)
			recordPauses(t)
			p := newLedgerFile(t, privateDir(t))
			r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(5000)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			reads := onRead(t, func(n int, path string) {
				if n != 1 {
					return
				}
				w, err := Open(path, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Create(CreateParams{}); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			})
			rep, err := r.reconcileFloat(600, 600, true)
			if err != nil || rep.ActiveExamined != 2 {
				t.Fatalf("%s %v", reconcileJSON(rep), err)
			}
			if *reads != 3 {
				t.Fatalf("%d reads", *reads)
			}
			_, werr := os.Lstat(p + "-wal")
			if locks != (werr == nil) {
				t.Fatalf("locks %v, -wal left: %v", locks, werr == nil)
			}
		})
	}
}

// TestReadOnlyReadBesideSteadyWriterSessions: writer sessions (open,
// create, close) come one after another as a busy fleet's commands do, timed
// as badly as possible: one starts inside every read, and one ends in every
// pause between attempts, the moment just before the read-only ledger
// takes its locks again. Each read then meets sidecars its view did not
// have; if the pause let the database's read lock go, the session ending
// there would remove them again, and every attempt would meet the same
// change (StateConflict after the retries: the doctor starved). With the
// lock kept across the pause the sidecars stay, and the second attempt
// locks the -shm and reads beside the writers, which then only append.
func TestReadOnlyReadBesideSteadyWriterSessions(t *testing.T) {
	withReadLocks(t, true)
	p := newLedgerFile(t, privateDir(t))
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(5000)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sessions := 0
	session := func() {
		sessions++
		w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Create(CreateParams{}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	reads := onRead(t, func(int, string) { session() })
	pauses := 0
	hooks.readOnlyPause = func(time.Duration) { pauses++; session() }
	t.Cleanup(func() { hooks.readOnlyPause = time.Sleep })
	rep, err := r.Doctor()
	if err != nil || !rep.Healthy {
		t.Fatalf("%s %v (after %d pauses)", reportJSON(rep), err, pauses)
	}
	// The first attempt's read, the pause, and the second attempt's schema
	// read and read each ran a session; the report is the ledger as the
	// second attempt's view found it.
	if pauses != 1 || *reads != 3 || sessions != 4 || rep.TaskCount != 3 {
		t.Fatalf("%d pauses, %d reads, %d sessions, %d tasks reported", pauses, *reads, sessions, rep.TaskCount)
	}
}

// TestReadOnlyReplacedMidRead: the database is renamed over during a read.
// The read fails closed (the guard holds the old file; a retry cannot
// help), and nothing is written.
func TestReadOnlyReplacedMidRead(t *testing.T) {
	dir := privateDir(t)
	p := newLedgerFile(t, dir)
	other := newLedgerFile(t, privateDir(t))
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var before map[string]string
	reads := onRead(t, func(n int, path string) {
		if n == 1 {
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
			before = snapshotDir(t, dir)
		}
	})
	_, err = r.Get("00000000-0000-4000-8000-000000000001")
	wantClass(t, err, ErrStateConflict)
	if *reads != 1 {
		t.Fatalf("%d reads", *reads)
	}
	if !sameSnapshot(before, snapshotDir(t, dir)) {
		t.Fatal("directory changed")
	}
}

// TestReadOnlySidecarAppearsMidRead: a -wal or -shm that appears during a
// read makes it retry, and the retry reads the files as they are now; a
// -journal that appears and stays fails closed after the retries.
func TestReadOnlySidecarAppearsMidRead(t *testing.T) {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		t.Run(suffix, func(t *testing.T) {
			pauses := recordPauses(t)
			dir := privateDir(t)
			p := newLedgerFile(t, dir)
			r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			reads := onRead(t, func(n int, path string) {
				if n == 1 {
					if err := os.WriteFile(path+suffix, nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			})
			rep, err := r.Doctor()
			if suffix == "-journal" {
				wantClass(t, err, ErrStateConflict)
				if *reads != 1 || len(*pauses) != len(readOnlyPauses) {
					t.Fatalf("%d reads, pauses %v", *reads, *pauses)
				}
				return
			}
			if err != nil || !rep.Healthy {
				t.Fatalf("%s %v", reportJSON(rep), err)
			}
			if *reads != 3 || len(*pauses) != 1 {
				t.Fatalf("%d reads, pauses %v", *reads, *pauses)
			}
			if _, err := os.Lstat(filepath.Join(dir, "ledger.sqlite"+suffix)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReadOnlyShmDescriptorsBounded: a long-lived read-only ledger reads
// beside writer sessions that each make and remove their own -shm; the
// descriptors it opened to lock them do not pile up.
func TestReadOnlyShmDescriptorsBounded(t *testing.T) {
	withReadLocks(t, true)
	p := newLedgerFile(t, privateDir(t))
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < 5; i++ {
		// A writer session that stays open while the read runs, so a -shm
		// exists to lock; closing it removes that -shm.
		w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Create(CreateParams{}); err != nil {
			t.Fatal(err)
		}
		if rep, err := r.Doctor(); err != nil || rep.TaskCount != i+2 {
			t.Fatalf("%s %v", reportJSON(rep), err)
		}
		w.Close()
		if _, err := os.Lstat(p + "-shm"); err == nil {
			t.Fatal("the writer's close left its -shm")
		}
	}
	_, n := r.guard.HeldLocks()
	if n > 1 {
		t.Fatalf("%d -shm descriptors kept", n)
	}
}

// TestReadOnlyRetriedChildren: a children read that is retried (a -wal
// appeared after its first attempt had listed the children) lists each
// child once.
func TestReadOnlyRetriedChildren(t *testing.T) {
	recordPauses(t)
	p := filepath.Join(privateDir(t), "ledger.sqlite")
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := w.Create(CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := w.Create(CreateParams{ParentID: parent.ID}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	attempts := 0
	hooks.afterReadOnlyRead = func(path string) {
		attempts++
		if attempts == 1 {
			if err := os.WriteFile(path+"-wal", nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { hooks.afterReadOnlyRead = nil })
	kids, err := r.ChildrenOf(parent.ID)
	if err != nil || len(kids) != 2 || attempts != 2 {
		t.Fatalf("%d children after %d attempts: %v", len(kids), attempts, err)
	}
}

// TestReadOnlyWriterStartsLogDuringRead: the view is made while a writer's
// -wal is still empty (the writer has opened the ledger but not yet
// committed), and during the read the writer commits, writing the log's
// header and first frames. With checkpoints held off, nothing the view read
// can have changed: the one read stands and reports the ledger as it was.
// Counting the new header as a change made a dry run beside short-lived
// writers fail now and then (TestDryRunBesideWriters, L4).
func TestReadOnlyWriterStartsLogDuringRead(t *testing.T) {
	withReadLocks(t, true)
	p := newLedgerFile(t, privateDir(t))
	keeper, err := sql.Open("sqlite", fileURI(p, "mode=rw&_pragma=busy_timeout(0)"))
	if err != nil {
		t.Fatal(err)
	}
	defer keeper.Close()
	keeper.SetMaxOpenConns(1)
	var n int
	if err := keeper.QueryRow("SELECT count(*) FROM tasks").Scan(&n); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if st, err := os.Lstat(p + "-wal"); err != nil || st.Size() != 0 {
		t.Fatalf("want an empty -wal before the read: %v %v", st, err)
	}
	r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reads := onRead(t, func(n int, _ string) {
		if n == 1 {
			if _, err := w.Create(CreateParams{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	rep, err := r.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 1 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
	if *reads != 1 {
		t.Fatalf("%d read transactions: the new log counted as a change under the read", *reads)
	}
	if rep, err = r.Doctor(); err != nil || rep.TaskCount != 2 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
}
