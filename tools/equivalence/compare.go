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
}

// replay runs the calls in a fresh directory and returns each outcome.
func replay(e engine, program []string, seq []step) ([]outcome, error) {
	dir, err := os.MkdirTemp("", "equivalence-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var out []outcome
	for _, s := range seq {
		cmd := exec.Command(program[0], append(append([]string{}, program[1:]...), s.args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), e.env(s)...)
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
		o := outcome{code: code, stdout: stdout.String()}
		path := filepath.Join(dir, e.file)
		if _, err := os.Lstat(path); err == nil {
			o.exists = true
			if o.files, err = e.snapshot(path); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// verdict is the comparison of one sequence: the index of the first call
// whose difference no declared divergence explains (-1 for none), or the
// declared divergence that ended the comparison ("" for none).
type verdict struct {
	undeclaredAt int
	declared     string
}

func compare(c config, seq []step) (verdict, error) {
	a, err := replay(c.engine, c.oldCmd, seq)
	if err != nil {
		return verdict{}, err
	}
	b, err := replay(c.engine, c.newCmd, seq)
	if err != nil {
		return verdict{}, err
	}
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		var before outcome // the new side before the call: no file at first
		if i > 0 {
			before = b[i-1]
		}
		if d := explain(c.engine.divergences, seq[i], before, a[i], b[i]); d != "" {
			return verdict{-1, d}, nil
		}
		return verdict{i, ""}, nil
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

func check(c config, w io.Writer) (result, error) {
	r := rand.New(rand.NewSource(c.seed))
	res := result{declared: map[string]int{}}
	for n := 0; n < c.sequences; n++ {
		seq := c.engine.generate(r, c.steps)
		v, err := compare(c, seq)
		if err != nil {
			return res, err
		}
		if v.declared != "" {
			res.declared[v.declared]++
		}
		if v.undeclaredAt < 0 {
			continue
		}
		res.differences++
		short, err := shorten(c, seq[:v.undeclaredAt+1])
		if err != nil {
			return res, err
		}
		fmt.Fprintf(w, "%s sequence %d (seed %d) differs at its last call; reproduction, in an empty directory:\n", c.engine.name, n, c.seed)
		for _, s := range short {
			fmt.Fprintf(w, "  %sPROGRAM %s\n", shellEnv(c.engine.env(s)), shellWords(s.args))
		}
	}
	return res, nil
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
