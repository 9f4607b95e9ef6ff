// Package childstat measures child processes for the benchmark tools:
// wall time, CPU time (user + system) and peak resident set size, and the
// medians of a series; CLI finds or builds the binary they run.
package childstat

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// Sample is one measured child process.
type Sample struct {
	Wall, CPU time.Duration
	RSSKiB    int64
}

// Of fills a sample from a finished process and its wall time.
func Of(ps *os.ProcessState, wall time.Duration) Sample {
	return Sample{Wall: wall, CPU: ps.UserTime() + ps.SystemTime(), RSSKiB: PeakRSSKiB(ps)}
}

// Summary holds the medians of a series and its largest peak RSS.
type Summary struct {
	Wall, CPU        time.Duration
	RSSKiB, MaxRSSKB int64
}

// Summarize returns the medians of samples (at least one).
func Summarize(samples []Sample) Summary {
	walls := make([]time.Duration, len(samples))
	cpus := make([]time.Duration, len(samples))
	rss := make([]int64, len(samples))
	var out Summary
	for i, s := range samples {
		walls[i], cpus[i], rss[i] = s.Wall, s.CPU, s.RSSKiB
		out.MaxRSSKB = max(out.MaxRSSKB, s.RSSKiB)
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	out.Wall, out.CPU, out.RSSKiB = walls[len(walls)/2], cpus[len(cpus)/2], rss[len(rss)/2]
	return out
}

// CLI is the binary to measure: bin made absolute when given, otherwise
// the command package pkg (such as "./cmd/sweep-state") built into dir.
func CLI(dir, pkg, bin string) (string, error) {
	if bin != "" {
		return filepath.Abs(bin)
	}
	bin = filepath.Join(dir, filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building the CLI: %w", err)
	}
	return bin, nil
}
