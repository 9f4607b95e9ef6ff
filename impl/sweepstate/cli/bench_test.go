package cli_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/sweepstate/cli"
	"github.com/stateguard/stateguard/impl/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// benchState writes a state file of n items, about 450 bytes of text each,
// held by lease writer "w1".
func benchState(b *testing.B, n int) string {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	lease := value.NewMap()
	lease.Set("writer", "w1")
	lease.Set("timestamp", "2026-07-02T12:00:00Z")
	lease.Set("ttl_minutes", value.Int(60))
	doc.Set("lease", lease)
	sources := value.NewMap()
	src := value.NewMap()
	src.Set("cursor", "1719900000.000100")
	sources.Set("slack:C42", src)
	doc.Set("sources", sources)
	items := value.NewMap()
	for i := 0; i < n; i++ {
		it := value.NewMap()
		it.Set("source", "slack:C42")
		it.Set("status", "analyzed")
		it.Set("title", fmt.Sprintf("Item %d: login page fails after password reset", i))
		it.Set("url", fmt.Sprintf("https://chat.example.com/archives/C42/p%d", 1719900000000100+i))
		it.Set("body", strings.Repeat("Steps: open the app, reset the password, log in again. ", 4))
		it.Set("id", fmt.Sprintf("1719900000.%06d", i))
		it.Set("labels", []value.Value{"auth", "regression"})
		items.Set(fmt.Sprintf("slack:C42:1719900000.%06d", i), it)
	}
	doc.Set("items", items)
	p := filepath.Join(b.TempDir(), "state.yml")
	if err := os.WriteFile(p, yamlsubset.Emit(doc), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
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
					out, err := cmd.Output()
					if err != nil || !strings.HasPrefix(string(out), "OK\n") {
						b.Fatalf("%v: %q %v", args[0], out[:min(len(out), 40)], err)
					}
					if kib := peakRSSKiB(cmd.ProcessState); kib > peakKiB {
						peakKiB = kib
					}
				}
				b.ReportMetric(float64(peakKiB)/1024, "maxrss-MiB")
			})
		}
	}
}

// BenchmarkInProcess runs the same calls through cli.Main without a process
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
				if rc := cli.Main(args, io.Discard, io.Discard); rc != 0 {
					b.Fatal(rc)
				}
			}
		})
	}
}
