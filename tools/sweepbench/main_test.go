package main

import "testing"

// TestMisses: the goal column names each goal of spec/sweep-state.md 19.2 a row misses.
func TestMisses(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		cpu, growth float64
		rssKiB      int64
		file        int64
		want        string
	}{
		{2.9, 10.9, 80 * 1024, 48 * mib, "ok"},
		{3.1, 0, 1024, 48 * mib, "CPU > 3x floor"},
		{1, 11.5, 1024, 48 * mib, "growth > 11x"},
		{1, 0, 81 * 1024, 48 * mib, "RSS > 1.5x file + 8 MiB"},
		{4, 12, 200 * 1024, 48 * mib, "CPU > 3x floor, growth > 11x, RSS > 1.5x file + 8 MiB"},
	} {
		if got := misses(c.cpu, c.growth, c.rssKiB, c.file); got != c.want {
			t.Errorf("misses(%g, %g, %d KiB, %d) = %q, want %q", c.cpu, c.growth, c.rssKiB, c.file, got, c.want)
		}
	}
}
