package sweepcli_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/childstat"
)

// benchState writes a state file of n items, about 450 bytes of text each,
// held by lease writer "w1". A child process builds it: on Linux a process
// started by os/exec (vfork) carries its parent's peak RSS into its own
// rusage Maxrss at exec, so the benchmark process must never grow large
// itself or maxrss-MiB would measure the benchmark, not sweep-state.
func benchState(b *testing.B, n int) string {
	p := filepath.Join(b.TempDir(), "state.yml")
	gen := exec.Command(os.Args[0])
	gen.Env = append(os.Environ(), benchStateEnv+"="+strconv.Itoa(n)+":"+p)
	if out, err := gen.CombinedOutput(); err != nil {
		b.Fatalf("generating the state file: %v\n%s", err, out)
	}
	return p
}

// benchStateEnv, set to "<items>:<path>", makes the test binary write that
// state file and exit (see TestMain).
const benchStateEnv = "SWEEP_BENCH_STATE"

func writeBenchState(spec string) error {
	nText, p, _ := strings.Cut(spec, ":")
	n, err := strconv.Atoi(nText)
	if err != nil {
		return err
	}
	return os.WriteFile(p, benchseed.SweepState(n), 0o600)
}

// BenchmarkCLI measures one sweep-state process, start to exit, and reports
// the child's peak resident set size (rusage Maxrss) as maxrss-MiB.
func BenchmarkCLI(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		for _, sub := range []string{"read", "upsert-item"} {
			b.Run(fmt.Sprintf("%s/items=%d", sub, n), func(b *testing.B) {
				state := benchState(b, n)
				fi, _ := os.Stat(state)
				b.SetBytes(fi.Size())
				var peakKiB int64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var args []string
					if sub == "read" {
						args = []string{"read", "--state", state}
					} else {
						args = []string{"upsert-item", "--state", state, "--source", "slack:C42",
							"--id", fmt.Sprintf("new-%d", i%50), "--json", `{"status": "ingested", "title": "bench"}`,
							"--writer", "w1", "--now", "2026-07-02T12:01:00Z"}
					}
					cmd := exec.Command(binPath, args...)
					var out headWriter // not all of read's output: see benchState
					cmd.Stdout = &out
					err := cmd.Run()
					if err != nil || !strings.HasPrefix(string(out.head), "OK\n") {
						b.Fatalf("%v: %q %v", args[0], out.head, err)
					}
					if kib := childstat.PeakRSSKiB(cmd.ProcessState); kib > peakKiB {
						peakKiB = kib
					}
				}
				b.ReportMetric(float64(peakKiB)/1024, "maxrss-MiB")
			})
		}
	}
}

// headWriter keeps the first 40 bytes written to it and drops the rest.
type headWriter struct{ head []byte }

func (w *headWriter) Write(p []byte) (int, error) {
	if n := 40 - len(w.head); n > 0 {
		w.head = append(w.head, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// BenchmarkInProcess runs the same calls through sweepcli.Main without a process
// start, for profiling (go test -bench InProcess -cpuprofile cpu.out).
func BenchmarkInProcess(b *testing.B) {
	for _, sub := range []string{"read", "upsert-item"} {
		b.Run(sub+"/items=10000", func(b *testing.B) {
			state := benchState(b, 10_000)
			args := []string{"read", "--state", state}
			if sub == "upsert-item" {
				args = []string{"upsert-item", "--state", state, "--source", "slack:C42", "--id", "x",
					"--json", `{"status": "ingested"}`, "--writer", "w1", "--now", "2026-07-02T12:01:00Z"}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if rc := sweepcli.Main(args, io.Discard, io.Discard); rc != 0 {
					b.Fatal(rc)
				}
			}
		})
	}
}
