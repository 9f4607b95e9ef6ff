// Package cliload puts the command lines under load for the tools: N
// workers, each running one CLI process after another (a mix of every
// subcommand) for a fixed time against one shared state file or ledger. A
// Report holds calls per second, latency percentiles, the answers by class
// and the CPU time the client processes took, and what the executable
// models (model/sweep, model/ledger) found lost. tools/loadrun and
// tools/ledgerengines run it.
package cliload

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config is one load run against one engine.
type Config struct {
	Bin      string        // the engine's binary
	Dir      string        // an empty directory for the state
	DB       string        // the ledger's --db ("": a file in Dir)
	Env      []string      // added to the processes' environment
	Procs    int           // workers, each running one process at a time
	Duration time.Duration // how long workers start new calls
	// AfterLoad, when set, is called once the workers have stopped and
	// before the final checks run their own calls (a caller measuring
	// the load alone reads its meters there).
	AfterLoad func()
}

// Report is what a run measured and found.
type Report struct {
	Engine    string
	Procs     int
	Elapsed   time.Duration
	Latencies []time.Duration
	ClientCPU time.Duration  // user + system time of every CLI process
	Answers   map[string]int // answer class -> count
	Forbidden []string       // answer classes that must never occur, seen
	Lost      []string       // what the model expected and the state lacks
}

// CallsPerSecond is the calls finished per second of the run.
func (r Report) CallsPerSecond() float64 {
	return float64(len(r.Latencies)) / r.Elapsed.Seconds()
}

// OK reports whether nothing forbidden happened and nothing was lost.
func (r Report) OK() bool { return len(r.Forbidden) == 0 && len(r.Lost) == 0 }

func (r Report) String() string {
	lat := slices.Clone(r.Latencies)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	var classes []string
	for k, n := range r.Answers {
		classes = append(classes, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(classes)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d processes, %d calls in %.1f s = %.0f calls/s; latency p50 %s, p99 %s, max %s\n",
		r.Engine, r.Procs, len(lat), r.Elapsed.Seconds(), float64(len(lat))/r.Elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond*100), pct(0.99).Round(time.Microsecond*100), pct(1).Round(time.Microsecond*100))
	fmt.Fprintf(&b, "  answers: %s\n", strings.Join(classes, ", "))
	if len(r.Forbidden) > 0 {
		fmt.Fprintf(&b, "  FORBIDDEN answers: %s\n", strings.Join(r.Forbidden, ", "))
	}
	if len(r.Lost) > 0 {
		fmt.Fprintf(&b, "  LOST (%d): %s\n", len(r.Lost), strings.Join(r.Lost[:min(len(r.Lost), 10)], "; "))
	} else {
		fmt.Fprintf(&b, "  model check: nothing lost\n")
	}
	return b.String()
}

// call is one finished CLI call.
type call struct {
	stdout  string
	status  int
	latency time.Duration
	cpu     time.Duration
}

// run executes bin with args and env, timing it.
func run(bin string, env []string, args ...string) (call, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	start := time.Now()
	out, err := cmd.Output()
	c := call{stdout: string(out), latency: time.Since(start)}
	if cmd.ProcessState != nil {
		c.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		c.status = exit.ExitCode()
	} else if err != nil {
		return c, err
	}
	return c, nil
}

// workers runs work(i, deadline) for Procs workers and gathers their
// latencies and answer classes.
type tally struct {
	mu        sync.Mutex
	latencies []time.Duration
	cpu       time.Duration
	answers   map[string]int
}

func (t *tally) add(c call, class string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.latencies = append(t.latencies, c.latency)
	t.cpu += c.cpu
	if t.answers == nil {
		t.answers = map[string]int{}
	}
	t.answers[class]++
}

func runWorkers(cfg Config, work func(w int, deadline time.Time) error) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	errs := make(chan error, cfg.Procs)
	var wg sync.WaitGroup
	for w := 0; w < cfg.Procs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := work(w, deadline); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if cfg.AfterLoad != nil {
		cfg.AfterLoad()
	}
	close(errs)
	return elapsed, <-errs
}
