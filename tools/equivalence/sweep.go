package main

import (
	"fmt"
	"math/rand"
	"os"
	"time"
)

func sweepEngine() engine {
	return engine{
		name:     "sweep",
		file:     "state.yml",
		generate: generateSweep,
		snapshot: func(path string) (string, error) {
			text, err := os.ReadFile(path)
			return string(text), err
		},
		env:         func(step) []string { return nil },
		divergences: sweepDivergences,
	}
}

// generateSweep returns one sequence of sweep-state calls. Every timestamp
// comes from the step number, never the wall clock.
func generateSweep(r *rand.Rand, steps int) []step {
	base := time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)
	writers := []string{"w1", "w2"}
	sources := []string{"mail", "chat"}
	ids := []string{"a1", "a2", "b1"}
	// Most calls come from the writer that takes the lease first, so that
	// writes get through; the other writer brings the lease's contests.
	seq := []step{{args: []string{"lease-acquire", "--state", "state.yml", "--writer", writers[0], "--now", base.Format(time.RFC3339)}}}
	clock := base
	for i := 1; i < steps; i++ {
		// The clock only moves forward, now and then past a lease's TTL.
		clock = clock.Add(time.Duration(r.Intn(25)) * time.Minute)
		now := clock.Format(time.RFC3339)
		w := writers[0]
		if r.Intn(5) == 0 {
			w = writers[1]
		}
		src := sources[r.Intn(len(sources))]
		id := ids[r.Intn(len(ids))]
		var c []string
		switch k := r.Intn(100); {
		case k < 18:
			c = []string{"lease-acquire", "--state", "state.yml", "--writer", w, "--ttl-minutes", fmt.Sprint(5 + r.Intn(85)), "--now", now}
		case k < 24:
			c = []string{"lease-release", "--state", "state.yml", "--writer", w}
		case k < 48:
			body := fmt.Sprintf(`{"title": "t%d", "status": "%s", "n": %d`, r.Intn(5), []string{"open", "closed", "closed", "fix_pending"}[r.Intn(4)], r.Intn(1000))
			if r.Intn(2) == 0 {
				body += `, "fix_ref": "PR#7", "verified_revision_id": "abc123", "verified_at": "` + now + `"`
			}
			body += "}"
			c = []string{"upsert-item", "--state", "state.yml", "--source", src, "--id", id, "--json", body, "--writer", w, "--now", now}
		case k < 58:
			c = []string{"cursor-advance", "--state", "state.yml", "--source", src, "--to", fmt.Sprint(r.Intn(50)), "--past-item", id, "--writer", w, "--now", now}
		case k < 64:
			c = []string{"cursor-get", "--state", "state.yml", "--source", src}
		case k < 70:
			c = []string{"run-record", "--state", "state.yml", "--writer", w, "--outcome", []string{"completed", "failed"}[r.Intn(2)], "--counts", `{"seen": 3}`, "--timestamp", now}
		case k < 84:
			c = []string{"validate", "--state", "state.yml"}
		case k < 94:
			c = []string{"read", "--state", "state.yml"}
		case k < 95:
			// A negative TTL (D7).
			c = []string{"lease-acquire", "--state", "state.yml", "--writer", w, "--ttl-minutes", "-1", "--now", now}
		case k < 96:
			// A number JSON cannot hold (D5).
			c = []string{"upsert-item", "--state", "state.yml", "--source", src, "--id", id, "--json", []string{`{"n": NaN}`, `{"n": -Infinity}`, `{"n": 1e999}`}[r.Intn(3)], "--writer", w, "--now", now}
		case k < 97:
			// A --now that is not a time (D14).
			c = []string{"cursor-advance", "--state", "state.yml", "--source", src, "--to", "7", "--past-item", id, "--writer", w, "--now", "soon"}
		default:
			// Misuse both answer alike: a required flag missing.
			c = []string{"upsert-item", "--state", "state.yml", "--source", src, "--writer", w}
		}
		seq = append(seq, step{args: c})
	}
	return seq
}
