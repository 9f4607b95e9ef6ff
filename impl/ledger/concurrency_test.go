package ledger

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestTwoWritersOneFile runs two ledgers on one file from two goroutines:
// BEGIN IMMEDIATE plus busy_timeout serialise them, and closing one ledger
// (and its share of the file descriptor) does not disturb the other.
func TestTwoWritersOneFile(t *testing.T) {
	p := filepath.Join(privateDir(t), "shared.sqlite")
	clock := func() float64 { return 5000 }
	a, err := Open(p, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(p, Options{Clock: clock})
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
				if _, err := l.Create(CreateParams{TaskID: id, DeliveryRequired: true}); err != nil {
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
	if _, err := b.Create(CreateParams{DeliveryRequired: true}); err != nil {
		t.Fatal(err)
	}
	rep, err := b.Doctor()
	if err != nil || !rep.Healthy || rep.TaskCount != 2*perWriter+1 {
		t.Fatalf("%s %v", reportJSON(rep), err)
	}
	b.Close()
	assertNoSidecars(t, p)
}
