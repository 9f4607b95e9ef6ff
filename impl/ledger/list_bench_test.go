package ledger

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// BenchmarkList reads one page of 100 through a read-only ledger (as the
// CLI's list does) for the filters of spec 6.9's measurements, on the
// benchmark ledger of 20,000 tasks (LEDGER_LIST_BENCH_TASKS=N for another
// size; LEDGER_LIST_BENCH_DB=PATH reads a ledger seeded with that many
// tasks instead of seeding one, such as tools/ledgerbench -keep-seeds
// leaves). B/op shows the memory of one page, which must not grow with
// the ledger.
func BenchmarkList(b *testing.B) {
	n := 20000
	if s := os.Getenv("LEDGER_LIST_BENCH_TASKS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 100 {
			b.Fatal("LEDGER_LIST_BENCH_TASKS must be a count of at least 100")
		}
	}
	p := os.Getenv("LEDGER_LIST_BENCH_DB") // a ledger tools/ledgerbench -keep-seeds seeded with n tasks
	if p == "" {
		p = newTemplateCache(b).seeded(b, n)
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	step := 0.05
	if n > 200000 {
		step = 10000 / float64(n)
	}
	first50, first100 := benchNow-100000+50, benchNow-100000+100
	last := fmt.Sprintf("%08x-0000-4000-8000-%012x", int(100/step)-10, int(100/step)-10)
	for _, c := range []struct {
		name string
		f    ListFilter
	}{
		{"all", ListFilter{}},
		{"queued", ListFilter{Statuses: []Status{StatusQueued}}},
		{"timed_out", ListFilter{Statuses: []Status{StatusTimedOut}}},
		{"updated-before-first+50s", ListFilter{UpdatedBefore: timePtr(first50)}},
		{"updated-before-first+100s-last-page", ListFilter{UpdatedBefore: timePtr(first100), After: last}},
	} {
		b.Run(fmt.Sprintf("%s/%d", c.name, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.List(c.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
