package journal

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// Environment knobs of the crash loops of both engines.
const (
	KillsEnv = "STATEGUARD_CRASH_KILLS" // kills per engine (default 50)
	SeedEnv  = "STATEGUARD_CRASH_SEED"  // replay the plans of a run
)

// Config reads the knobs and returns the number of kills and a generator
// for the plans, seeded from the clock unless SeedEnv says otherwise. The
// seed is logged so that a failure replays its plans (the kill moments
// depend on timing; the plans do not). stream keeps the engines' plan
// sequences apart for one seed.
func Config(t testing.TB, stream uint64) (kills int, rng *rand.Rand) {
	t.Helper()
	kills = 50
	if s := os.Getenv(KillsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", KillsEnv, s)
		}
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(SeedEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a number", SeedEnv, s)
		}
		seed = n
	}
	t.Logf("crash loop: %d kills, seed %d (replay the plans with %s=%d)", kills, seed, SeedEnv, seed)
	return kills, rand.New(rand.NewPCG(seed, stream))
}
