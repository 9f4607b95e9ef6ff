package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// step is one call: the command line without the program, and the time of
// the test clock for the engines that take it from the environment ("" for
// none).
type step struct {
	args []string
	now  string
}

// outcome is what one call left behind: its exit status and stdout, and
// whether the engine's file exists with what it holds.
type outcome struct {
	code   int
	stdout string
	exists bool
	files  string
}

// engine is what the generic check needs to know of one of the two tools.
type engine struct {
	name     string // "sweep" or "ledger", for the report
	file     string // the file the calls name, relative to the directory
	generate func(r *rand.Rand, steps int) []step
	// snapshot reads the engine's file at path (it exists).
	snapshot    func(path string) (string, error)
	env         func(s step) []string // the environment a call adds
	divergences []divergence
}

type config struct {
	engine         engine
	oldCmd, newCmd []string
	sequences      int
	steps          int
	seed           int64
	jobs           int // sequences compared at once
}

// runCall runs program with args in dir and returns its exit status and
// stdout; an error only when the program could not be run at all.
func runCall(program, args []string, dir string, env []string) (int, string, error) {
	cmd := exec.Command(program[0], append(append([]string{}, program[1:]...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("running %s: %w", program[0], err)
	}
	return 0, stdout.String(), nil
}

// sideDir is one command's directory in a sequence, with the last snapshot
// of its file and the bytes it was read from.
type sideDir struct {
	dir                 string
	lastBytes, lastRead string
	read                bool
}

// call runs one step of a sequence in the side's directory and reads what
// it left. A file whose bytes (with its -wal, for a ledger) are those of
// the last snapshot is not read again: the snapshot is a function of them,
// and most calls (reads, refusals) change nothing.
func call(e engine, program []string, sd *sideDir, s step) (outcome, error) {
	code, stdout, err := runCall(program, s.args, sd.dir, e.env(s))
	if err != nil {
		return outcome{}, err
	}
	o := outcome{code: code, stdout: stdout}
	path := filepath.Join(sd.dir, e.file)
	if _, err := os.Lstat(path); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return outcome{}, err
		}
		return o, nil
	}
	o.exists = true
	content, err := os.ReadFile(path)
	if err != nil {
		return outcome{}, err
	}
	wal, err := os.ReadFile(path + "-wal")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return outcome{}, err
	}
	key := string(content) + "\x00-wal\x00" + string(wal)
	if sd.read && key == sd.lastBytes {
		o.files = sd.lastRead
		return o, nil
	}
	if o.files, err = e.snapshot(path); err != nil {
		return outcome{}, err
	}
	sd.read, sd.lastBytes, sd.lastRead = true, key, o.files
	return o, nil
}

// verdict is the comparison of one sequence: the index of the first call
// whose difference no declared divergence explains (-1 for none), or the
// declared divergence that ended the comparison ("" for none).
type verdict struct {
	undeclaredAt int
	declared     string
}

// compare runs the sequence against both commands in step: each call on
// the old and the new side at once, each side in a fresh directory of its
// own, and stops at the first call that differs (nothing after it is
// compared, so nothing after it needs to run).
func compare(c config, seq []step) (verdict, error) {
	var sides [2]sideDir
	for i := range sides {
		dir, err := os.MkdirTemp("", "equivalence-")
		if err != nil {
			return verdict{}, err
		}
		defer os.RemoveAll(dir)
		sides[i].dir = dir
	}
	var before outcome // the new side before the call: no file at first
	for i, s := range seq {
		var outs [2]outcome
		var errs [2]error
		var wg sync.WaitGroup
		for i, program := range [2][]string{c.oldCmd, c.newCmd} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], errs[i] = call(c.engine, program, &sides[i], s)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs[0], errs[1]); err != nil {
			return verdict{}, err
		}
		if outs[0] != outs[1] {
			if d := explain(c.engine.divergences, s, before, outs[0], outs[1]); d != "" {
				return verdict{-1, d}, nil
			}
			return verdict{i, ""}, nil
		}
		before = outs[1]
	}
	return verdict{-1, ""}, nil
}

// shorten drops calls, one at a time, while the sequence still ends in an
// undeclared difference at its last call.
func shorten(c config, seq []step) ([]step, error) {
	for i := len(seq) - 2; i >= 0; i-- {
		candidate := append(append([]step{}, seq[:i]...), seq[i+1:]...)
		v, err := compare(c, candidate)
		if err != nil {
			return nil, err
		}
		if v.undeclaredAt == len(candidate)-1 {
			seq = candidate
		}
	}
	return seq, nil
}

// result is one side's tally.
type result struct {
	differences int
	declared    map[string]int // sequences ended by each declared divergence
}

func (r result) declaredLine(e engine) string {
	parts := make([]string, len(e.divergences))
	for i, d := range e.divergences {
		parts[i] = fmt.Sprintf("%s %d", d.name, r.declared[d.name])
	}
	return fmt.Sprintf("%s: sequences ended by a declared divergence (%s section 17): %s",
		e.name, e.divergences[0].spec, strings.Join(parts, ", "))
}

// check runs c.sequences generated sequences, jobs of them at a time,
// and prints each difference, shortened, in the order of the sequences, as
// soon as the sequences before it are done.
func check(c config, w io.Writer) (result, error) {
	r := rand.New(rand.NewSource(c.seed))
	seqs := make([][]step, c.sequences)
	for n := range seqs {
		seqs[n] = c.engine.generate(r, c.steps)
	}
	type answer struct {
		v     verdict
		short []step
		err   error
	}
	answers := make([]answer, len(seqs))
	done := make([]chan struct{}, len(seqs))
	for n := range done {
		done[n] = make(chan struct{})
	}
	go parallel(len(seqs), c.jobs, func(n int) {
		defer close(done[n])
		a := &answers[n]
		if a.v, a.err = compare(c, seqs[n]); a.err == nil && a.v.undeclaredAt >= 0 {
			a.short, a.err = shorten(c, seqs[n][:a.v.undeclaredAt+1])
		}
	})
	res := result{declared: map[string]int{}}
	var firstErr error
	for n := range seqs {
		<-done[n]
		a := answers[n]
		if firstErr != nil || a.err != nil {
			// Let the workers finish before the directories go.
			firstErr = errors.Join(firstErr, a.err)
			continue
		}
		if a.v.declared != "" {
			res.declared[a.v.declared]++
		}
		if a.v.undeclaredAt < 0 {
			continue
		}
		res.differences++
		fmt.Fprintf(w, "%s sequence %d (seed %d) differs at its last call; reproduction, in an empty directory:\n", c.engine.name, n, c.seed)
		for _, s := range a.short {
			fmt.Fprintf(w, "  %sPROGRAM %s\n", shellEnv(c.engine.env(s)), shellWords(s.args))
		}
	}
	return res, firstErr
}

// parallel calls f(0) ... f(n-1), at most jobs at a time, lowest first,
// and returns when every call has returned.
func parallel(n, jobs int, f func(i int)) {
	if jobs < 1 {
		jobs = 1
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func shellEnv(env []string) string {
	var b strings.Builder
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		b.WriteString(name + "=" + shellWords([]string{value}) + " ")
	}
	return b.String()
}

// shellWords quotes each word for a POSIX shell.
func shellWords(words []string) string {
	quoted := make([]string, len(words))
	for i, word := range words {
		if word != "" && strings.Trim(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+") == "" {
			quoted[i] = word
		} else {
			quoted[i] = "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
