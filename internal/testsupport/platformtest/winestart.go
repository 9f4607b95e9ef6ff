package platformtest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// errInternal is Windows' ERROR_INTERNAL_ERROR (1359, "Internal error."),
// which Wine's CreateProcess returns now and then under load: about once
// in a few thousand starts on a busy 2-core machine, in a suite that
// starts tens of thousands of processes.
const errInternal = syscall.Errno(1359)

// wineStartTries bounds the starts of one process under Wine.
const wineStartTries = 5

// wineRefusedStart reports an error of exec.Cmd's Start, Run or Output
// that says Wine refused to create the process: it is the start's own
// error ("fork/exec PATH: Internal error."), never a waited process's
// ExitError, so the child never ran and did nothing.
func wineRefusedStart(err error, wine bool) bool {
	var pe *fs.PathError
	return wine && errors.As(err, &pe) && pe.Op == "fork/exec" && errors.Is(pe.Err, errInternal)
}

// RetryWineStart calls run, which must make a fresh exec.Cmd and start it
// (Start, Run, Output and the like), and returns its error. Under Wine, a
// start that Wine refused with ERROR_INTERNAL_ERROR, where the child never
// ran, is not an answer of the code under test: run is called again, at
// most wineStartTries times in all, and log (a testing.TB, or a testscript
// script) logs each refusal. Elsewhere run is called once and its error
// returned as it is.
func RetryWineStart(log Logger, run func() error) error {
	if h, ok := log.(interface{ Helper() }); ok {
		h.Helper()
	}
	return retryStart(log, underWine(), run)
}

// Logger is what RetryWineStart logs to.
type Logger interface {
	Logf(format string, args ...any)
}

func retryStart(t Logger, wine bool, run func() error) error {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper() // the refusal is logged at the test's call
	}
	var err error
	for try := 1; try <= wineStartTries; try++ {
		err = run()
		if !wineRefusedStart(err, wine) {
			return err
		}
		t.Logf("Wine refused to start a process (try %d of %d): %v", try, wineStartTries, err)
	}
	return err
}

// NoScriptExec fails t for each line of the txtar scripts in dir that
// runs a program with testscript's exec, which cannot try a start again
// that Wine refused; the scripts use their exits command instead.
func NoScriptExec(t testing.TB, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in %s (%v)", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") {
				break // the archive's files follow the script
			}
			fields := strings.Fields(line)
			// Past the negation and the conditions: [posixmodes] ! exec ...
			for len(fields) > 0 && (fields[0] == "!" || fields[0] == "?" || strings.HasPrefix(fields[0], "[")) {
				fields = fields[1:]
			}
			if len(fields) > 0 && fields[0] == "exec" {
				t.Errorf("%s:%d: exec; run programs with exits (exits 0 for a success)", filepath.Base(f), i+1)
			}
		}
	}
}
