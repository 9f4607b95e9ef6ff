// Command ledgerengines sets task-state-guard's two engines side by side in
// one run on this machine: the same binary on a SQLite file and on a
// throwaway PostgreSQL cluster (internal/testsupport/pgtest, a unix socket,
// no TCP). It measures
//
//   - the calls per second of W workers running the CLI's task cycle
//     (create, start, heartbeat, close, delivery, with get and reconcile
//     among them: tools/internal/cliload, whose model check must find
//     nothing lost on either engine), in rounds that alternate the engines;
//   - reconcile's dry run, reconcile and doctor through the CLI on ledgers
//     seeded with benchseed's workload at each size, the engines
//     alternating run by run;
//
// and prints the medians, wall and CPU, with the ratios PostgreSQL ÷
// SQLite. The client's CPU is the CLI process's own (its rusage); the
// server's is what the cluster's processes took while the call ran, read
// from /proc (the postmaster's time, the time of the children it reaped,
// and its live children's), so it includes the server's background
// processes of those moments.
//
//	go run ./tools/ledgerengines                       # 20,000 and 250,000 tasks, 3 runs, 8 workers x 3 rounds of 5 s
//	go run ./tools/ledgerengines -sizes 20000 -runs 5
//	go run ./tools/ledgerengines -quick                # 2,000 tasks, 1 run, 1 round of 2 s
//
// The seeding is set-based, never through the CLI: benchseed fills a
// SQLite ledger in one transaction, postgres.Restore loads that file into
// a database with one COPY per table, and VACUUM ANALYZE then settles the
// server's statistics, as an operator's running ledger has them. A
// reconcile that applies works on a fresh copy each run: a file copy on
// SQLite, CREATE DATABASE ... TEMPLATE on the server. Every answer is
// checked: the two engines' reconcile reports must be the same bytes and
// match the seeded shape, and the doctor must call both ledgers healthy
// with the same counts.
//
// The CLI runs with its test clock pinned to the seeding instant, so every
// run makes the same decisions; the workers use the real clocks (the
// wall clock on SQLite, the server's on PostgreSQL). Wall time is measured
// here, outside any decision path.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

func main() {
	sizes := flag.String("sizes", "20000,250000", "comma-separated task counts of the seeded ledgers")
	runs := flag.Int("runs", 3, "measured runs per command, engine and size (medians reported)")
	workers := flag.Int("workers", 8, "concurrent CLI workers of the load")
	rounds := flag.Int("rounds", 3, "rounds of load per engine, alternating the engines")
	round := flag.Duration("round", 5*time.Second, "length of one round of load")
	quick := flag.Bool("quick", false, "a quick look: 2,000 tasks, 1 run, 1 round of 2 s (overrides -sizes, -runs, -rounds, -round)")
	bin := flag.String("bin", "", "task-state-guard binary (default: go build ./cmd/task-state-guard)")
	flag.Parse()
	cfg := config{runs: *runs, workers: *workers, rounds: *rounds, round: *round, bin: *bin}
	text := *sizes
	if *quick {
		text, cfg.runs, cfg.rounds, cfg.round = "2000", 1, 1, 2*time.Second
	}
	var err error
	if cfg.sizes, err = parseSizes(text); err == nil {
		err = cfg.check()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledgerengines:", err)
		os.Exit(2)
	}
	cluster, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledgerengines: starting a PostgreSQL cluster:", err)
		os.Exit(2)
	}
	err = run(cfg, cluster, os.Stdout, os.Stderr)
	if stopErr := cluster.Stop(); err == nil && stopErr != nil {
		err = stopErr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledgerengines:", err)
		os.Exit(1)
	}
}

// config is one run's settings.
type config struct {
	sizes   []int
	runs    int
	workers int
	rounds  int
	round   time.Duration
	bin     string
}

func (c config) check() error {
	switch {
	case c.runs < 1:
		return fmt.Errorf("-runs must be at least 1")
	case c.workers < 1:
		return fmt.Errorf("-workers must be at least 1")
	case c.rounds < 1:
		return fmt.Errorf("-rounds must be at least 1")
	case c.round <= 0:
		return fmt.Errorf("-round must be positive")
	}
	return nil
}

func parseSizes(text string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 10 || n%10 != 0 {
			return nil, fmt.Errorf("bad size %q: a multiple of 10, at least 10", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
