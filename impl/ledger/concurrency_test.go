package ledger

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestTwoWritersOneFile runs two ledgers on one file from two goroutines:
// BEGIN IMMEDIATE plus busy_timeout serialise them, and closing one ledger
// (and its share of the file descriptor) does not disturb the other.
func TestTwoWritersOneFile(t *testing.T) {
	p := filepath.Join(privateDir(t), "shared.sqlite")
	clock := fixedClock(5000)
	a, err := Open(p, Options{AllowExternalACL: onWindows, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(p, Options{AllowExternalACL: onWindows, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	const perWriter = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*perWriter)
	for w, l := range []*Ledger{a, b} {
		wg.Add(1)
		go func(w int, l *Ledger) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				id := fmt.Sprintf("00000000-0000-4000-8000-%06x%06x", w, i)
				if _, err := l.Create(CreateParams{TaskID: id}); err != nil {
					errs <- err
					return
				}
				if _, err := l.Start(id); err != nil {
					errs <- err
					return
				}
			}
		}(w, l)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// b keeps working after a closed.
	if _, err := b.Create(CreateParams{}); err != nil {
		t.Fatal(err)
	}
	rep, err := b.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 2*perWriter+1 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
	b.Close()
	assertNoSidecars(t, p)
}

// TestDryRunBesideWriters is divergence L4: read-only opens and dry runs
// of a file that a writer keeps opening, writing and closing (so the
// -wal/-shm pair appears and disappears under them) never fail. Without
// OFD locks (Windows, macOS) a read that meets a checkpoint or a closing
// writer retries and may give up (spec 12.4): there the only failure
// allowed is StateConflict, and some reads must succeed.
func TestDryRunBesideWriters(t *testing.T) {
	runs := 200
	if !platformtest.HasOFDLocks {
		runs = 40 // each read may retry several times
	}
	p := filepath.Join(privateDir(t), "busy.sqlite")
	clock := fixedClock(5000)
	w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	stop := make(chan struct{})
	writerErr := make(chan error, 1)
	go func() {
		defer close(writerErr)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Each round is one short-lived writer, as a CLI call is.
			l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: clock})
			if err != nil {
				writerErr <- err
				return
			}
			_, err = l.Create(CreateParams{Internal: i%2 != 0})
			l.Close()
			if err != nil {
				writerErr <- err
				return
			}
		}
	}()
	failures := 0
	var first error
	for i := 0; i < runs; i++ {
		l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: clock})
		if err == nil {
			_, err = l.reconcileFloat(600, 600, true)
			l.Close()
		}
		if err != nil {
			if !platformtest.HasOFDLocks && !errors.Is(err, ErrStateConflict) {
				t.Errorf("read-only dry run %d: %v, want success or StateConflict", i, err)
			}
			failures++
			if first == nil {
				first = err
			}
		}
	}
	close(stop)
	if err := <-writerErr; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if platformtest.HasOFDLocks && failures != 0 || failures == runs {
		t.Fatalf("%d of %d read-only dry runs failed; first: %v", failures, runs, first)
	}
}
