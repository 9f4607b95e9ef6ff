//go:build unix

package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// BuildPlanrun builds tools/planrun into dir and returns its path.
func BuildPlanrun(dir string) (string, error) {
	p := filepath.Join(dir, "planrun")
	build := exec.Command("go", "build", "-o", p, "github.com/stateguard/stateguard/tools/planrun")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building planrun: %v\n%s", err, out)
	}
	return p, nil
}

// RunAndKill writes plan into dir, starts planrun on it in a process group
// of its own, SIGKILLs the whole group (planrun and the call it runs) after
// delay, waits until every process of the group has died, and returns
// the journal. The kill moment is the fault being
// injected, not a synchronisation: every outcome is checked.
func RunAndKill(planrun, dir string, plan []Step, delay time.Duration) (Journal, error) {
	planFile := filepath.Join(dir, "plan.json")
	journalFile := filepath.Join(dir, "journal")
	if err := os.Remove(journalFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Journal{}, err
	}
	data, err := json.Marshal(Plan{Steps: plan})
	if err != nil {
		return Journal{}, err
	}
	if err := os.WriteFile(planFile, data, 0o600); err != nil {
		return Journal{}, err
	}
	cmd := exec.Command(planrun, planFile, journalFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return Journal{}, err
	}
	time.Sleep(delay)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return Journal{}, err
	}
	// Wait until the call planrun was running has died too: only then
	// is the file system what the crash left.
	deadline := time.Now().Add(30 * time.Second)
	for groupAlive(cmd.Process.Pid) {
		if time.Now().After(deadline) {
			return Journal{}, errors.New("the killed process group did not die within 30 s")
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err == nil && stderr.Len() > 0 {
		return Journal{}, fmt.Errorf("planrun: %s", stderr.String())
	}
	text, err := os.ReadFile(journalFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Journal{}, err
	}
	return Parse(string(text))
}
