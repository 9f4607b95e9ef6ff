package main

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// wantLayout is the report of TestSmallRun with every number written N
// and the server's version VERSION: the layout is fixed, only the measured
// numbers vary.
const wantLayout = `task-state-guard on SQLite and on PostgreSQL VERSION, one binary, side by side
machine: N CPUs, load average N at the start, N at the end

N workers through the CLI; per engine N x Nms of load, the engines alternating

| engine | calls | seconds | calls/s | pN ms | pN ms | client CPU ms/call | server CPU ms/call | model check |
|---|---:|---:|---:|---:|---:|---:|---:|---|
| SQLite | N | N | N | N | N | N | n/a | nothing lost |
| PostgreSQL | N | N | N | N | N | N | N | nothing lost |

N runs per command and engine, medians; CPU on PostgreSQL is the client's plus the server's

| tasks | command | SQLite wall ms | SQLite CPU ms | PostgreSQL wall ms | PostgreSQL client CPU ms | PostgreSQL server CPU ms | wall PG ÷ SQLite | CPU PG ÷ SQLite |
|---:|---|---:|---:|---:|---:|---:|---:|---:|
| N | reconcile --dry-run | N | N | N | N | N | N | N |
| N | reconcile | N | N | N | N | N | N | N |
| N | doctor | N | N | N | N | N | N | N |

ratios, PostgreSQL ÷ SQLite:
  calls/s of N workers: N
  reconcile --dry-run at N tasks: wall N, CPU N
  reconcile at N tasks: wall N, CPU N
  doctor at N tasks: wall N, CPU N
`

var (
	version = regexp.MustCompile(`PostgreSQL [^,]*, one binary`)
	number  = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
)

// TestSmallRun runs the tool end to end at a small size, so that it
// cannot rot: the workers' model check on both engines, both engines'
// reconcile reports equal and doing the seeded work on every run (the
// second run of the applying reconcile must get a fresh copy), the
// doctors healthy and equal, and the report's layout.
func TestSmallRun(t *testing.T) {
	platformtest.GoCommand(t)
	cluster := pgtest.NewCluster(t)
	cfg := config{sizes: []int{100}, runs: 2, workers: 2, rounds: 1, round: 300 * time.Millisecond}
	var out, log bytes.Buffer
	if err := run(cfg, cluster, &out, &log); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), log.String())
	}
	t.Log("\n" + out.String())
	got := version.ReplaceAllString(out.String(), "PostgreSQL VERSION, one binary")
	if got = number.ReplaceAllString(got, "N"); got != wantLayout {
		t.Errorf("the report's layout changed:\n%s\nwant\n%s", got, wantLayout)
	}
}
