package main

import "os"

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
