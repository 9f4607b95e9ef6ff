// Package benchseed makes the benchmarks' workloads, for this repository's
// benchmarks and tools only: a ledger of n tasks (Seed) and a sweep state
// file of n items (SweepState). Neither is part of a public API.
// impl/ledger installs Seed when it is linked in, because seeding fast
// needs the ledger's own write transaction.
package benchseed

import "errors"

// Seed creates a ledger at path holding n benchmark tasks stamped around
// now (see impl/ledger's seedBenchmark for the mix). It is nil until
// impl/ledger is imported.
var Seed func(path string, n int, now float64) error

// Run calls Seed, or fails when no ledger registered it.
func Run(path string, n int, now float64) error {
	if Seed == nil {
		return errors.New("benchseed: impl/ledger is not linked in")
	}
	return Seed(path, n, now)
}
