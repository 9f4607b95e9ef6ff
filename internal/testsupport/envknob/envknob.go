// Package envknob reads the environment variables that scale the long
// randomised tests (crash loops, linearizability): a count, and a seed
// that replays a run's plans.
package envknob

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// Count is the positive number in the variable name, or def when unset.
func Count(t testing.TB, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// Rand is a generator seeded from the variable name, or from the clock
// when unset; the seed is logged so that a failure can be replayed.
// stream keeps the generators of different tests apart for one seed.
func Rand(t testing.TB, name string, stream uint64) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(name); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a number", name, s)
		}
		seed = n
	}
	t.Logf("seed %d (replay with %s=%d)", seed, name, seed)
	return rand.New(rand.NewPCG(seed, stream))
}
