package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// openRaces is how many fresh ledgers TestOpenRaceOnFreshPath races two
// Opens on; LEDGER_OPEN_RACES raises it (issue 17 asks for 100 with no
// failure).
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
func TestOpenRaceOnFreshPath(t *testing.T) {
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
				l, err := Open(p, Options{Clock: func() float64 { return 5000 }})
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
		l, err := Open(p, Options{ReadOnly: true})
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
