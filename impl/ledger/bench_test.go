package ledger

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// benchNow is the clock of every benchmark.
const benchNow = 1.7e9

// templateCache seeds each size once per top-level benchmark, in that
// benchmark's temporary directory, so nothing outlives the run.
type templateCache struct {
	dir   string
	paths map[int]string
}

func newTemplateCache(b *testing.B) *templateCache {
	return &templateCache{dir: b.TempDir(), paths: map[int]string{}}
}

// seeded returns a seeded ledger of n tasks, building it on first use.
func (c *templateCache) seeded(b *testing.B, n int) string {
	if p, ok := c.paths[n]; ok {
		return p
	}
	p := filepath.Join(c.dir, fmt.Sprintf("seed-%d.sqlite", n))
	if err := seedBenchmark(p, n, benchNow); err != nil {
		b.Fatal(err)
	}
	c.paths[n] = p
	return p
}

// copyTemplate copies a seeded ledger into a fresh private directory.
func copyTemplate(b *testing.B, src string) string {
	dir, err := os.MkdirTemp(b.TempDir(), "c")
	if err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(dir, "ledger.sqlite")
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	out.Close()
	return dst
}

var benchSizes = []int{20000, 100000}

func BenchmarkReconcile(b *testing.B) {
	cache := newTemplateCache(b)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := cache.seeded(b, n)
			cpu := 0.0
			defer func() { b.ReportMetric(cpu/float64(b.N), "cpu-s/op") }()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				l, err := Open(copyTemplate(b, src), Options{AllowExternalACL: onWindows, Clock: fixedClock(benchNow)})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c0 := processCPUSeconds()
				rep, err := l.reconcileFloat(600, 600, false)
				cpu += processCPUSeconds() - c0
				b.StopTimer()
				if err != nil || rep.TasksTimedOut != n*3/10 {
					b.Fatalf("%+v %v", rep, err)
				}
				l.Close()
				b.StartTimer()
			}
		})
	}
}

func BenchmarkDryRun(b *testing.B) {
	cache := newTemplateCache(b)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l, err := Open(copyTemplate(b, cache.seeded(b, n)), Options{AllowExternalACL: onWindows, Clock: fixedClock(benchNow)})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ResetTimer()
			c0 := processCPUSeconds()
			defer func() { b.ReportMetric((processCPUSeconds()-c0)/float64(b.N), "cpu-s/op") }()
			for i := 0; i < b.N; i++ {
				rep, err := l.reconcileFloat(600, 600, true)
				if err != nil || rep.TasksTimedOut != n*3/10 {
					b.Fatalf("%+v %v", rep, err)
				}
			}
		})
	}
}

func BenchmarkDoctor(b *testing.B) {
	cache := newTemplateCache(b)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l, err := Open(copyTemplate(b, cache.seeded(b, n)), Options{AllowExternalACL: onWindows, Clock: fixedClock(benchNow)})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ResetTimer()
			c0 := processCPUSeconds()
			defer func() { b.ReportMetric((processCPUSeconds()-c0)/float64(b.N), "cpu-s/op") }()
			for i := 0; i < b.N; i++ {
				rep, err := l.Doctor()
				if err != nil || !rep.Healthy || rep.TaskCount != n {
					b.Fatalf("%s %v", reportJSON(rep), err)
				}
			}
		})
	}
}

// BenchmarkMixedOps cycles create, start, heartbeat, close, delivery and
// get on one open ledger; every operation still re-checks the file
// identity and the sidecars.
func BenchmarkMixedOps(b *testing.B) {
	clock := benchNow
	l, err := Open(filepath.Join(b.TempDir(), "mixed.sqlite"), withClockSeconds(Options{AllowExternalACL: onWindows}, func() float64 { return clock }))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var id string
	b.ResetTimer()
	c0 := processCPUSeconds()
	for i := 0; i < b.N; i++ {
		clock += 0.001
		var err error
		switch i % 6 {
		case 0:
			var task Task
			task, err = l.Create(CreateParams{})
			id = task.ID
		case 1:
			_, err = l.Start(id)
		case 2:
			_, err = l.Heartbeat(id)
		case 3:
			_, err = l.CloseTask(id, StatusSucceeded, "worker_completed")
		case 4:
			_, err = l.SetDelivery(id, DeliveryDelivered, "transport_acknowledged")
		case 5:
			_, err = l.Get(id)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	if cpu := processCPUSeconds() - c0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu, "ops/cpu-s")
	}
}

func TestSeedBenchmarkHealthy(t *testing.T) {
	p := filepath.Join(privateDir(t), "seed.sqlite")
	if err := seedBenchmark(p, 200, benchNow); err != nil {
		t.Fatal(err)
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(benchNow)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	healthy(t, l)
	var running, withTimeout int
	if err := l.conn.QueryRowContext(context.Background(),
		`SELECT count(*), count(timeout_seconds) FROM tasks WHERE status = 'running'`).Scan(&running, &withTimeout); err != nil {
		t.Fatal(err)
	}
	if running != 60 || withTimeout != 30 {
		t.Fatalf("running %d, with a timeout %d; want 60 and half of them", running, withTimeout)
	}
	// "Every other running task": in creation order they alternate, the
	// first with a timeout.
	rows, err := l.conn.QueryContext(context.Background(),
		`SELECT timeout_seconds IS NOT NULL FROM tasks WHERE status = 'running' ORDER BY created_at`)
	if err != nil {
		t.Fatal(err)
	}
	var timeouts []bool
	for rows.Next() {
		var has bool
		if err := rows.Scan(&has); err != nil {
			rows.Close()
			t.Fatal(err)
		}
		timeouts = append(timeouts, has)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for k, has := range timeouts {
		if has != (k%2 == 0) {
			t.Fatalf("running task %d in creation order: timeout %v, want every other one from the first", k, has)
		}
	}
	// Every time lies in the first 10,000 s after now-100000 (the doc's
	// promise, which the reconcile below relies on), spread 0.05 s apart.
	var first, last, latest float64
	if err := l.conn.QueryRowContext(context.Background(),
		`SELECT min(created_at), max(created_at), max(max(updated_at, delivery_updated_at, ifnull(ended_at, 0), ifnull(deadline_at, 0))) FROM tasks`).Scan(&first, &last, &latest); err != nil {
		t.Fatal(err)
	}
	if first != benchNow-100000 || last != benchNow-100000+199*0.05 || latest > benchNow-90000 {
		t.Fatalf("created %v..%v, latest time %v; want from %v, 0.05 s apart, nothing after %v", first, last, latest, benchNow-100000, benchNow-90000)
	}
	rep, err := l.reconcileFloat(600, 600, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TasksTimedOut != 60 || rep.FreshActiveRetained != 60 || rep.DeliveriesFailed != 40 || rep.DeliveriesNotApplicable != 40 || rep.PendingDeliveryRetained != 60 {
		t.Fatalf("%+v", rep)
	}
	healthy(t, l)
}
