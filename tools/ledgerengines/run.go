package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/childstat"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	"github.com/stateguard/stateguard/tools/internal/cliload"
)

// engine names a side of the comparison.
type engine int

const (
	sqlite engine = iota
	server
)

func (e engine) String() string { return [...]string{"SQLite", "PostgreSQL"}[e] }

// order is the engines in the order a run or round takes them: they
// alternate, so a drift of the machine's load does not favour one side.
func order(i int) []engine {
	if i%2 == 0 {
		return []engine{sqlite, server}
	}
	return []engine{server, sqlite}
}

// settlePatience bounds the wait for a measured call's server processes
// to end (settle).
const settlePatience = 5 * time.Second

// bench is one run of the tool.
type bench struct {
	cfg  config
	bin  string
	work string
	srv  *pgServer
	log  io.Writer
}

func run(cfg config, cluster *pgtest.Cluster, out, log io.Writer) error {
	work, err := os.MkdirTemp("", "ledgerengines-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := &bench{cfg: cfg, work: work, log: log}
	if b.bin, err = childstat.CLI(work, "github.com/stateguard/stateguard/cmd/task-state-guard", cfg.bin); err != nil {
		return err
	}
	if b.srv, err = newServer(cluster); err != nil {
		return fmt.Errorf("reading the server: %w", err)
	}
	loadBefore := loadAverage()
	load, err := b.load()
	if err != nil {
		return err
	}
	var rows []commandRow
	for _, n := range cfg.sizes {
		r, err := b.size(n)
		if err != nil {
			return fmt.Errorf("%d tasks: %w", n, err)
		}
		rows = append(rows, r...)
	}
	report(out, cfg, b.srv.version, loadBefore, loadAverage(), load, rows)
	for _, e := range []engine{sqlite, server} {
		if !load[e].ok() {
			return fmt.Errorf("the load on %s: %s", e, load[e].problem())
		}
	}
	for _, r := range rows {
		for e, failed := range r.failed {
			if failed {
				return fmt.Errorf("%s at %d tasks failed on %s (its error is above)", r.name, r.tasks, engine(e))
			}
		}
	}
	return nil
}

// loadResult sums an engine's rounds of load.
type loadResult struct {
	calls             int
	elapsed           time.Duration
	latencies         []time.Duration
	client, serverCPU time.Duration
	forbidden, lost   []string
}

func (l loadResult) ok() bool { return len(l.forbidden) == 0 && len(l.lost) == 0 }

func (l loadResult) problem() string {
	return fmt.Sprintf("forbidden answers %q, lost %q", l.forbidden, l.lost[:min(len(l.lost), 5)])
}

func (l loadResult) callsPerSecond() float64 { return float64(l.calls) / l.elapsed.Seconds() }

// load runs the rounds of W workers on fresh ledgers, the engines
// alternating.
func (b *bench) load() ([2]loadResult, error) {
	var res [2]loadResult
	for r := 0; r < b.cfg.rounds; r++ {
		for _, e := range order(r) {
			dir := filepath.Join(b.work, fmt.Sprintf("load-%d-%s", r, e))
			if err := os.Mkdir(dir, 0o700); err != nil {
				return res, err
			}
			cfg := cliload.Config{Bin: b.bin, Dir: dir, Procs: b.cfg.workers, Duration: b.cfg.round}
			var before, after reading
			var meterErr error
			if e == server {
				url, drop, err := b.srv.cluster.NewDatabase()
				if err != nil {
					return res, err
				}
				defer drop()
				cfg.DB = url
				cfg.AfterLoad = func() {
					if meterErr = b.srv.meter.settle(before, settlePatience); meterErr == nil {
						after, meterErr = b.srv.meter.read()
					}
				}
				if before, meterErr = b.srv.meter.read(); meterErr != nil {
					return res, meterErr
				}
			}
			rep, err := cliload.RunLedger(cfg)
			if err == nil {
				err = meterErr
			}
			if err != nil {
				return res, fmt.Errorf("load on %s: %w", e, err)
			}
			fmt.Fprintf(b.log, "ledgerengines: round %d on %s: %d calls in %.1f s\n", r+1, e, len(rep.Latencies), rep.Elapsed.Seconds())
			t := &res[e]
			t.calls += len(rep.Latencies)
			t.elapsed += rep.Elapsed
			t.latencies = append(t.latencies, rep.Latencies...)
			t.client += rep.ClientCPU
			t.serverCPU += after.cpu - before.cpu
			t.forbidden = append(t.forbidden, rep.Forbidden...)
			t.lost = append(t.lost, rep.Lost...)
		}
	}
	return res, nil
}

// A measured command: its CLI arguments and whether it writes (then each
// run works on a fresh copy of the seeded ledger).
type command struct {
	name   string
	args   []string
	writes bool
}

var commands = []command{
	{name: "reconcile --dry-run", args: []string{"reconcile", "--dry-run"}},
	{name: "reconcile", args: []string{"reconcile"}, writes: true},
	{name: "doctor", args: []string{"doctor"}},
}

// sample is one measured CLI call.
type sample struct {
	wall, client, serverCPU time.Duration
}

// commandRow is one command at one size, both engines' medians.
type commandRow struct {
	tasks  int
	name   string
	of     [2]sample
	failed [2]bool // a call failed: its error is on the log, the row is not measured
}

// size seeds both engines with n tasks and measures every command, runs
// alternating the engines.
func (b *bench) size(n int) ([]commandRow, error) {
	began := time.Now()
	seedDir := filepath.Join(b.work, fmt.Sprintf("seed-%d", n))
	file, err := seedFile(seedDir, n)
	if err != nil {
		return nil, fmt.Errorf("seeding SQLite: %w", err)
	}
	fmt.Fprintf(b.log, "ledgerengines: seeded %d tasks on SQLite in %s\n", n, time.Since(began).Round(time.Millisecond))
	began = time.Now()
	seedDB := fmt.Sprintf("seed_%d", n)
	url, err := b.srv.seedDatabase(seedDB, file)
	if err != nil {
		return nil, fmt.Errorf("seeding PostgreSQL: %w", err)
	}
	defer b.srv.dropDatabase(seedDB)
	fmt.Fprintf(b.log, "ledgerengines: seeded %d tasks on PostgreSQL in %s\n", n, time.Since(began).Round(time.Millisecond))
	seeded := [2]string{sqlite: file, server: url}

	var rows []commandRow
	copies := 0
	for _, c := range commands {
		row := commandRow{tasks: n, name: c.name}
		var samples [2][]sample
		for r := 0; r < b.cfg.runs && row.failed == [2]bool{}; r++ {
			var answers [2]string
			for _, e := range order(r) {
				target, cleanup := seeded[e], func() error { return nil }
				if c.writes {
					copies++
					if target, cleanup, err = b.freshCopy(e, seeded[e], seedDB, copies); err != nil {
						return nil, err
					}
				}
				s, stdout, err := b.call(e, target, c.args)
				if cerr := cleanup(); err == nil {
					err = cerr
				}
				if err != nil {
					// Reported, and the other rows still measured.
					fmt.Fprintf(b.log, "ledgerengines: %d tasks: %s on %s failed: %v\n", n, c.name, e, err)
					row.failed[e] = true
					continue
				}
				samples[e] = append(samples[e], s)
				answers[e] = stdout
			}
			if row.failed != [2]bool{} {
				break
			}
			if err := checkAnswers(c, n, answers); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
		}
		for e := range samples {
			if len(samples[e]) > 0 {
				row.of[e] = medians(samples[e])
			}
		}
		fmt.Fprintf(b.log, "ledgerengines: %d tasks, %s: SQLite %s, PostgreSQL %s\n", n, c.name,
			row.of[sqlite].wall.Round(time.Millisecond), row.of[server].wall.Round(time.Millisecond))
		rows = append(rows, row)
	}
	os.RemoveAll(seedDir)
	return rows, nil
}

// freshCopy makes a copy of the seeded ledger for one writing run.
func (b *bench) freshCopy(e engine, seeded, seedDB string, k int) (string, func() error, error) {
	if e == sqlite {
		db, err := benchseed.CopyLedger(b.work, seeded)
		return db, func() error { return os.RemoveAll(filepath.Dir(db)) }, err
	}
	return b.srv.copyDatabase(fmt.Sprintf("%s_run%d", seedDB, k), seedDB)
}

// call runs the CLI once on target with the test clock at seedNow and
// measures it; it must exit 0 and write nothing to stderr.
func (b *bench) call(e engine, target string, args []string) (sample, string, error) {
	cmd := exec.Command(b.bin, append([]string{"--db", target}, args...)...)
	cmd.Env = append(os.Environ(), ledgercli.TestClockEnv+"=1", ledgercli.TestNowEnv+"="+strconv.FormatFloat(seedNow, 'f', -1, 64))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var before reading
	var err error
	if e == server {
		if before, err = b.srv.meter.read(); err != nil {
			return sample{}, "", err
		}
	}
	start := time.Now()
	err = cmd.Run()
	s := sample{wall: time.Since(start)}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return s, "", err
	}
	if err != nil || stderr.Len() != 0 {
		return s, "", fmt.Errorf("%v, output %q %q", err, stdout.String(), stderr.String())
	}
	s.client = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if e == server {
		if err := b.srv.meter.settle(before, settlePatience); err != nil {
			return s, "", err
		}
		after, err := b.srv.meter.read()
		if err != nil {
			return s, "", err
		}
		s.serverCPU = after.cpu - before.cpu
	}
	return s, stdout.String(), nil
}

// checkAnswers checks one run's answers of both engines: the reconcile
// reports are the same bytes and do the seeded work; the doctor calls
// both ledgers healthy with the same counts.
func checkAnswers(c command, n int, answers [2]string) error {
	if c.args[0] == "reconcile" {
		if answers[sqlite] != answers[server] {
			return fmt.Errorf("the engines' reports differ: %q and %q", answers[sqlite], answers[server])
		}
		var got struct {
			OK        bool
			Reconcile struct {
				Applied                 bool `json:"applied"`
				ActiveExamined          int  `json:"active_examined"`
				TasksTimedOut           int  `json:"tasks_timed_out"`
				DeliveriesFailed        int  `json:"deliveries_failed"`
				DeliveriesNotApplicable int  `json:"deliveries_not_applicable"`
			}
		}
		if err := json.Unmarshal([]byte(answers[sqlite]), &got); err != nil {
			return err
		}
		r := got.Reconcile
		// benchseed's shape: 30% queued, 30% running and stale, 40%
		// terminal with a pending delivery, half of them internal.
		if !got.OK || r.Applied != c.writes || r.ActiveExamined != n*6/10 || r.TasksTimedOut != n*3/10 ||
			r.DeliveriesFailed != n*2/10 || r.DeliveriesNotApplicable != n*2/10 {
			return fmt.Errorf("not the seeded work: %s", answers[sqlite])
		}
		return nil
	}
	var counts [2]string
	for e, text := range answers {
		var got map[string]any
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			return err
		}
		if got["healthy"] != true || got["task_count"] != float64(n) {
			return fmt.Errorf("%s: not a healthy ledger of %d tasks: %s", engine(e), n, text)
		}
		delete(got, "quick_check") // a declared difference (spec 20)
		b, _ := json.Marshal(got)
		counts[e] = string(b)
	}
	if counts[sqlite] != counts[server] {
		return fmt.Errorf("the engines' doctors differ: %s and %s", counts[sqlite], counts[server])
	}
	return nil
}

func medians(samples []sample) sample {
	pick := func(get func(sample) time.Duration) time.Duration {
		v := make([]time.Duration, len(samples))
		for i, s := range samples {
			v[i] = get(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return sample{
		wall:      pick(func(s sample) time.Duration { return s.wall }),
		client:    pick(func(s sample) time.Duration { return s.client }),
		serverCPU: pick(func(s sample) time.Duration { return s.serverCPU }),
	}
}

// loadAverage is the one-minute load average, "" where /proc has none.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(raw))[0]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64)
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64)
}

// report prints the run's tables: the layout is fixed, only the measured
// numbers vary.
func report(out io.Writer, cfg config, version, loadBefore, loadAfter string, load [2]loadResult, rows []commandRow) {
	fmt.Fprintf(out, "task-state-guard on SQLite and on PostgreSQL %s, one binary, side by side\n", version)
	fmt.Fprintf(out, "machine: %d CPUs, load average %s at the start, %s at the end\n\n", runtime.NumCPU(), loadBefore, loadAfter)
	fmt.Fprintf(out, "%d workers through the CLI; per engine %d x %s of load, the engines alternating\n\n", cfg.workers, cfg.rounds, cfg.round)
	fmt.Fprintln(out, "| engine | calls | seconds | calls/s | p50 ms | p99 ms | client CPU ms/call | server CPU ms/call | model check |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, e := range []engine{sqlite, server} {
		l := load[e]
		lat := slices.Clone(l.latencies)
		slices.Sort(lat)
		pct := func(p float64) time.Duration {
			if len(lat) == 0 {
				return 0
			}
			return lat[min(len(lat)-1, int(p*float64(len(lat))))]
		}
		perCall := func(d time.Duration) time.Duration {
			if l.calls == 0 {
				return 0
			}
			return d / time.Duration(l.calls)
		}
		serverCPU := "n/a"
		if e == server {
			serverCPU = ms(perCall(l.serverCPU))
		}
		check := "nothing lost"
		if !l.ok() {
			check = "FAILED"
		}
		fmt.Fprintf(out, "| %s | %d | %.1f | %.1f | %s | %s | %s | %s | %s |\n", e, l.calls, l.elapsed.Seconds(), l.callsPerSecond(),
			ms(pct(0.5)), ms(pct(0.99)), ms(perCall(l.client)), serverCPU, check)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "%d runs per command and engine, medians; CPU on PostgreSQL is the client's plus the server's\n\n", cfg.runs)
	fmt.Fprintln(out, "| tasks | command | SQLite wall ms | SQLite CPU ms | PostgreSQL wall ms | PostgreSQL client CPU ms | PostgreSQL server CPU ms | wall PG ÷ SQLite | CPU PG ÷ SQLite |")
	fmt.Fprintln(out, "|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		s, p := r.of[sqlite], r.of[server]
		cells := []string{ms(s.wall), ms(s.client), ms(p.wall), ms(p.client), ms(p.serverCPU),
			ratio(p.wall.Seconds(), s.wall.Seconds()), ratio((p.client + p.serverCPU).Seconds(), s.client.Seconds())}
		if r.failed[sqlite] {
			cells[0], cells[1] = "FAILED", "FAILED"
		}
		if r.failed[server] {
			cells[2], cells[3], cells[4] = "FAILED", "FAILED", "FAILED"
		}
		if r.failed != [2]bool{} {
			cells[5], cells[6] = "n/a", "n/a"
		}
		fmt.Fprintf(out, "| %d | %s | %s |\n", r.tasks, r.name, strings.Join(cells, " | "))
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "ratios, PostgreSQL ÷ SQLite:")
	fmt.Fprintf(out, "  calls/s of %d workers: %s\n", cfg.workers, ratio(load[server].callsPerSecond(), load[sqlite].callsPerSecond()))
	for _, r := range rows {
		s, p := r.of[sqlite], r.of[server]
		if r.failed != [2]bool{} {
			fmt.Fprintf(out, "  %s at %d tasks: wall n/a, CPU n/a (FAILED)\n", r.name, r.tasks)
			continue
		}
		fmt.Fprintf(out, "  %s at %d tasks: wall %s, CPU %s\n", r.name, r.tasks, ratio(p.wall.Seconds(), s.wall.Seconds()),
			ratio((p.client+p.serverCPU).Seconds(), s.client.Seconds()))
	}
}
