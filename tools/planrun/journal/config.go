package journal

import (
	"math/rand/v2"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/envknob"
)

// Environment knobs of the crash loops of both engines.
const (
	KillsEnv = "STATEGUARD_CRASH_KILLS" // kills per engine (default 50)
	SeedEnv  = "STATEGUARD_CRASH_SEED"  // replay the plans of a run
)

// Config reads the knobs: the number of kills (default 50) and a
// generator for the plans (the kill moments depend on timing; the plans
// do not). stream keeps the engines' plans apart for one seed.
func Config(t testing.TB, stream uint64) (kills int, rng *rand.Rand) {
	t.Helper()
	kills = envknob.Count(t, KillsEnv, 50)
	t.Logf("crash loop: %d kills", kills)
	return kills, envknob.Rand(t, SeedEnv, stream)
}
