// Command ledgerab compares two builds of the task-state-guard binary on
// the same seeded ledger, command by command, in interleaved pairs: each
// round runs the command once with A and once with B (order alternating),
// each on a fresh copy for writing commands, so load that drifts over the
// run hits both alike. It prints each side's median wall time and the
// median of the per-round differences B - A.
//
//	go run ./tools/ledgerab -a ./tsg-old -b ./tsg-new -size 20000 -rounds 31
//
// The ledger is seeded with internal/testsupport/benchseed in a child run of this
// program; the CLI runs with its test clock pinned to the seeding instant.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
)

const seedNow = 1700000000.0

// probeID is a task the benchmark seeding writes (the seventh: terminal, internal).
const probeID = "00000007-0000-4000-8000-000000000007"

type command struct {
	name   string
	args   []string
	writes bool // needs a fresh copy per run
}

var commands = []command{
	{"create", []string{"create"}, true},
	{"reconcile", []string{"reconcile"}, true},
	{"reconcile --dry-run", []string{"reconcile", "--dry-run"}, false},
	{"doctor", []string{"doctor"}, false},
	{"get", []string{"get", probeID}, false},
	{"children", []string{"children", probeID}, false},
}

func main() {
	a := flag.String("a", "", "binary A")
	b := flag.String("b", "", "binary B")
	size := flag.Int("size", 20000, "tasks in the seeded ledger")
	rounds := flag.Int("rounds", 21, "interleaved pairs per command")
	seed := flag.String("seed", "", "internal: seed the ledger at this path with -size tasks and exit")
	flag.Parse()
	if *seed != "" {
		if err := seedLedger(*seed, *size); err != nil {
			fmt.Fprintln(os.Stderr, "ledgerab:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*a, *b, *size, *rounds, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ledgerab:", err)
		os.Exit(1)
	}
}

func run(a, b string, size, rounds int, out io.Writer) error {
	if a == "" || b == "" || rounds < 1 {
		return fmt.Errorf("need -a, -b and -rounds >= 1")
	}
	bins := [2]string{}
	for i, p := range []string{a, b} {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		bins[i] = abs
	}
	work, err := os.MkdirTemp("", "ledgerab-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	seedDir := filepath.Join(work, "seed")
	if err := os.Mkdir(seedDir, 0o700); err != nil {
		return err
	}
	seeded := filepath.Join(seedDir, "tasks.sqlite")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	seedCmd := exec.Command(self, "-seed", seeded, "-size", strconv.Itoa(size))
	seedCmd.Stderr = os.Stderr
	if err := seedCmd.Run(); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	fmt.Fprintf(out, "| tasks | command | A wall ms | B wall ms | median of B-A wall ms | A cpu ms | B cpu ms | A peak RSS MiB | B peak RSS MiB | rounds |\n")
	fmt.Fprintf(out, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range commands {
		var wall, cpu, rss [2][]float64
		var diff []float64
		for r := 0; r < rounds; r++ {
			var pair [2]float64
			for k := 0; k < 2; k++ {
				side := (r + k) % 2 // alternate which side runs first
				s, err := once(bins[side], work, seeded, c)
				if err != nil {
					return fmt.Errorf("%s with %s: %w", c.name, bins[side], err)
				}
				pair[side] = s.wallMS
				wall[side] = append(wall[side], s.wallMS)
				cpu[side] = append(cpu[side], s.cpuMS)
				rss[side] = append(rss[side], s.rssMiB)
			}
			diff = append(diff, pair[1]-pair[0])
		}
		fmt.Fprintf(out, "| %d | %s | %.1f | %.1f | %+.1f | %.1f | %.1f | %.1f | %.1f | %d |\n", size, c.name,
			median(wall[0]), median(wall[1]), median(diff), median(cpu[0]), median(cpu[1]), median(rss[0]), median(rss[1]), rounds)
	}
	return nil
}

// sample is one measured run.
type sample struct{ wallMS, cpuMS, rssMiB float64 }

// once runs one command and measures it; a writing command gets a fresh,
// flushed copy of the seed.
func once(bin, work, seeded string, c command) (sample, error) {
	db := seeded
	if c.writes {
		dir, err := os.MkdirTemp(work, "run-")
		if err != nil {
			return sample{}, err
		}
		defer os.RemoveAll(dir)
		db = filepath.Join(dir, "tasks.sqlite")
		if err := copyFlushed(seeded, db); err != nil {
			return sample{}, err
		}
	}
	cmd := exec.Command(bin, append([]string{"--db", db}, c.args...)...)
	cmd.Env = append(os.Environ(), ledgercli.TestClockEnv+"=1", ledgercli.TestNowEnv+"="+strconv.FormatFloat(seedNow, 'f', -1, 64))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	start := time.Now()
	err := cmd.Run()
	ms := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, stdout.String())
	}
	if !bytes.Contains(stdout.Bytes(), []byte(`"ok":true`)) && !bytes.Contains(stdout.Bytes(), []byte(`"healthy":true`)) {
		return sample{}, fmt.Errorf("unexpected output %s", stdout.String())
	}
	cpu, rss := usage(cmd.ProcessState)
	return sample{wallMS: ms, cpuMS: cpu, rssMiB: rss}, nil
}

func copyFlushed(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// seedLedger creates the ledger at path with impl/ledger's Open (the clock
// at seedNow) and fills it with benchseed's workload of n tasks.
func seedLedger(path string, n int) error {
	l, err := ledger.Open(path, ledger.Options{AllowExternalACL: runtime.GOOS == "windows", Clock: func() time.Time { return time.Unix(seedNow, 0) }})
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	return benchseed.LedgerRows(path, n, seedNow)
}
