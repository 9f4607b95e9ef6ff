package platformtest

import (
	"errors"
	"io/fs"
	"os/exec"
	"syscall"
	"testing"
)

func TestRetryWineStart(t *testing.T) {
	refused := &fs.PathError{Op: "fork/exec", Path: `Z:\bin\sweep-state.exe`, Err: syscall.Errno(1359)}
	other := &fs.PathError{Op: "fork/exec", Path: `Z:\bin\sweep-state.exe`, Err: syscall.Errno(2)}
	exited := &exec.ExitError{}

	refusedTwice := func(calls *int) func() error {
		return func() error {
			*calls++
			if *calls <= 2 {
				return refused
			}
			return nil
		}
	}
	var calls int
	if err := retryStart(t, true, refusedTwice(&calls)); err != nil || calls != 3 {
		t.Errorf("under Wine, refused twice then started: err %v after %d calls, want nil after 3", err, calls)
	}
	calls = 0
	if err := retryStart(t, false, refusedTwice(&calls)); !errors.Is(err, refused) || calls != 1 {
		t.Errorf("not under Wine: err %v after %d calls, want the refusal after 1", err, calls)
	}
	for _, e := range []error{other, exited, errors.New("Internal error.")} {
		calls = 0
		err := retryStart(t, true, func() error { calls++; return e })
		if err != e || calls != 1 {
			t.Errorf("under Wine, %v: err %v after %d calls, want it after 1", e, err, calls)
		}
	}
	calls = 0
	err := retryStart(t, true, func() error { calls++; return refused })
	if !errors.Is(err, refused) || calls != wineStartTries {
		t.Errorf("refused every time: err %v after %d calls, want the refusal after %d", err, calls, wineStartTries)
	}
}
