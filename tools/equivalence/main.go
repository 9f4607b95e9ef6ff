// Command equivalence checks that two sweep-state commands, the one a team
// runs today and its replacement, answer the same on the same calls:
//
//	go run ./tools/equivalence -sweep-old 'python3 scripts/sweep-state.py' -sweep-new sweep-state [-sequences N] [-seed S]
//
// It generates sequences of calls (leases of two writers, items, cursors,
// run records, validate, read, and misuse such as a missing flag or a
// negative TTL), runs each sequence against both commands in two fresh
// temporary directories with the same clock (--now and --timestamp move on
// a fixed schedule), and after every call compares the exit status,
// stdout and the state file's bytes. A sequence that differs is printed as
// a shortened reproduction: the fewest calls, in order, that still end in
// the difference, ready to paste into a shell. The last line is
//
//	N/M sequences equivalent; K differences outside the declared divergences
//
// and the exit status is 0 only when K is 0.
//
// Not yet done: the ledger side (-ledger-old/-ledger-new), and applying
// the declared divergences (spec §17, D1-D12) by name, so today every
// difference counts, including a declared one.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	oldCmd, newCmd []string
	sequences      int
	steps          int
	seed           int64
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("equivalence", flag.ContinueOnError)
	flags.SetOutput(stderr)
	oldCmd := flags.String("sweep-old", "", "the sweep-state command run today (words split at spaces)")
	newCmd := flags.String("sweep-new", "", "the replacement sweep-state command")
	sequences := flags.Int("sequences", 200, "how many sequences to run")
	steps := flags.Int("steps", 12, "calls per sequence")
	seed := flags.Int64("seed", 1, "seed of the generator; the same seed gives the same sequences")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *oldCmd == "" || *newCmd == "" || *sequences < 1 || *steps < 1 {
		fmt.Fprintln(stderr, "equivalence: -sweep-old and -sweep-new are required, -sequences and -steps at least 1")
		return 2
	}
	c := config{strings.Fields(*oldCmd), strings.Fields(*newCmd), *sequences, *steps, *seed}
	differences, err := check(c, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "equivalence:", err)
		return 2
	}
	fmt.Fprintf(stdout, "%d/%d sequences equivalent; %d differences outside the declared divergences\n",
		c.sequences-differences, c.sequences, differences)
	if differences > 0 {
		return 1
	}
	return 0
}

// call is one command line, without the program.
type call []string

// generate returns one sequence from the generator. Every timestamp comes
// from the step number, never the wall clock.
func generate(r *rand.Rand, steps int) []call {
	base := time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)
	writers := []string{"w1", "w2"}
	sources := []string{"mail", "chat"}
	ids := []string{"a1", "a2", "b1"}
	// Most calls come from the writer that takes the lease first, so that
	// writes get through; the other writer brings the lease's contests.
	seq := []call{{"lease-acquire", "--state", "state.yml", "--writer", writers[0], "--now", base.Format(time.RFC3339)}}
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
		var c call
		switch k := r.Intn(100); {
		case k < 18:
			c = call{"lease-acquire", "--state", "state.yml", "--writer", w, "--ttl-minutes", fmt.Sprint(5 + r.Intn(85)), "--now", now}
		case k < 24:
			c = call{"lease-release", "--state", "state.yml", "--writer", w}
		case k < 48:
			body := fmt.Sprintf(`{"title": "t%d", "status": "%s", "n": %d`, r.Intn(5), []string{"open", "closed", "closed", "fix_pending"}[r.Intn(4)], r.Intn(1000))
			if r.Intn(2) == 0 {
				body += `, "fix_ref": "PR#7", "verified_revision_id": "abc123", "verified_at": "` + now + `"`
			}
			body += "}"
			c = call{"upsert-item", "--state", "state.yml", "--source", src, "--id", id, "--json", body, "--writer", w, "--now", now}
		case k < 58:
			c = call{"cursor-advance", "--state", "state.yml", "--source", src, "--to", fmt.Sprint(r.Intn(50)), "--past-item", id, "--writer", w, "--now", now}
		case k < 64:
			c = call{"cursor-get", "--state", "state.yml", "--source", src}
		case k < 70:
			c = call{"run-record", "--state", "state.yml", "--writer", w, "--outcome", []string{"completed", "failed"}[r.Intn(2)], "--counts", `{"seen": 3}`, "--timestamp", now}
		case k < 84:
			c = call{"validate", "--state", "state.yml"}
		case k < 94:
			c = call{"read", "--state", "state.yml"}
		case k < 97:
			c = call{"lease-acquire", "--state", "state.yml", "--writer", w, "--ttl-minutes", "-1", "--now", now}
		default:
			c = call{"upsert-item", "--state", "state.yml", "--source", src, "--writer", w}
		}
		seq = append(seq, c)
	}
	return seq
}

// outcome is what one call left behind.
type outcome struct {
	code   int
	stdout string
	state  string
}

// replay runs the calls in a fresh directory and returns each outcome.
func replay(program []string, seq []call) ([]outcome, error) {
	dir, err := os.MkdirTemp("", "equivalence-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var out []outcome
	for _, c := range seq {
		cmd := exec.Command(program[0], append(append([]string{}, program[1:]...), c...)...)
		cmd.Dir = dir
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			return nil, fmt.Errorf("running %s: %w", program[0], err)
		}
		state, err := os.ReadFile(filepath.Join(dir, "state.yml"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		out = append(out, outcome{code, stdout.String(), string(state)})
	}
	return out, nil
}

// firstDifference runs seq on both and returns the index of the first call
// whose outcome differs, or -1.
func firstDifference(c config, seq []call) (int, error) {
	a, err := replay(c.oldCmd, seq)
	if err != nil {
		return 0, err
	}
	b, err := replay(c.newCmd, seq)
	if err != nil {
		return 0, err
	}
	for i := range a {
		if a[i] != b[i] {
			return i, nil
		}
	}
	return -1, nil
}

// shorten drops calls, one at a time, while the sequence still ends in a
// difference at its last call.
func shorten(c config, seq []call) ([]call, error) {
	for i := len(seq) - 2; i >= 0; i-- {
		candidate := append(append([]call{}, seq[:i]...), seq[i+1:]...)
		at, err := firstDifference(c, candidate)
		if err != nil {
			return nil, err
		}
		if at == len(candidate)-1 {
			seq = candidate
		}
	}
	return seq, nil
}

func check(c config, w io.Writer) (int, error) {
	r := rand.New(rand.NewSource(c.seed))
	differences := 0
	for n := 0; n < c.sequences; n++ {
		seq := generate(r, c.steps)
		at, err := firstDifference(c, seq)
		if err != nil {
			return 0, err
		}
		if at < 0 {
			continue
		}
		differences++
		short, err := shorten(c, seq[:at+1])
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(w, "sequence %d (seed %d) differs at its last call; reproduction, in an empty directory:\n", n, c.seed)
		for _, call := range short {
			fmt.Fprintf(w, "  PROGRAM %s\n", shellWords(call))
		}
	}
	return differences, nil
}

// shellWords quotes each word for a POSIX shell.
func shellWords(words []string) string {
	quoted := make([]string, len(words))
	for i, word := range words {
		if word != "" && strings.Trim(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:") == "" {
			quoted[i] = word
		} else {
			quoted[i] = "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
