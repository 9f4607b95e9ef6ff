//go:build linux

package crashfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/crashfs"
)

// longEnv runs every cut point and many torn states instead of a sample.
const longEnv = "STATEGUARD_POWERLOSS_LONG"

func long() bool { return os.Getenv(longEnv) == "1" }

var (
	binOnce              sync.Once
	binDir               string
	sweepBin, ledgerBin  string
	binErr               error
	sweepPkg, ledgerPkg  = "github.com/stateguard/stateguard/cmd/sweep-state", "github.com/stateguard/stateguard/cmd/task-state-guard"
	removeBinariesAtExit = func() {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
	}
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(child(spec))
	}
	code := m.Run()
	removeBinariesAtExit()
	os.Exit(code)
}

// binaries builds both CLIs once for the package's tests.
func binaries(t *testing.T) (sweep, ledger string) {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "crashfs-bin-")
		if binErr != nil {
			return
		}
		sweepBin, ledgerBin = filepath.Join(binDir, "sweep-state"), filepath.Join(binDir, "task-state-guard")
		for bin, pkg := range map[string]string{sweepBin: sweepPkg, ledgerBin: ledgerPkg} {
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				binErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return sweepBin, ledgerBin
}

// run runs a binary to its end in its own process group, killed with the
// test process, and returns its standard output and exit status.
func run(t *testing.T, env []string, bin string, args ...string) (string, int) {
	t.Helper()
	stdout, _, rc := runStderr(t, env, bin, args...)
	return stdout, rc
}

// runStderr is run that returns standard error too.
func runStderr(t *testing.T, env []string, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("run %s %q: %v", filepath.Base(bin), args, err)
	}
	return stdout.String(), stderr.String(), 0
}

// answer is a call's output and exit status in one comparable string.
func answer(out string, rc int) string {
	return fmt.Sprintf("%s (exit %d)", strings.TrimSpace(out), rc)
}

// writeOut writes a tree (a scenario's directory) into a fresh real
// directory, as the disk would hold it after the cut, and returns it.
func writeOut(t *testing.T, n *crashfs.Node) string {
	t.Helper()
	dir := t.TempDir()
	if n == nil {
		return dir
	}
	if err := n.WriteOut(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// scenario writes tree into a fresh directory name of the mount and makes
// everything durable: the state before the call a test cuts.
func scenario(t *testing.T, m *crashfs.Mount, name string, tree *crashfs.Node) string {
	t.Helper()
	dir := filepath.Join(m.Dir, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if tree != nil {
		if err := tree.WriteOut(dir); err != nil {
			t.Fatal(err)
		}
	}
	m.FS.SyncAll()
	return dir
}

// tornPerCut is how many torn variants (proof (c)) each cut with unsynced
// changes is checked in: STATEGUARD_POWERLOSS_TORN=N, else 1, or 4 in the
// long run.
func tornPerCut(t *testing.T) int {
	if v := os.Getenv(tornEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("%s=%q: want a count", tornEnv, v)
		}
		return n
	}
	if long() {
		return 4
	}
	return 1
}

const tornEnv = "STATEGUARD_POWERLOSS_TORN"

// tornSeed is the fixed seed of a cut's j-th torn variant: the same run
// draws the same torn states, so a failure replays by running the test
// again (the message names the seed and what was kept).
func tornSeed(cut string, j int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", cut, j)
	return h.Sum64()
}

// cutPoints are the operation counts to cut after within a call of n
// operations: all of them in the long run, else up to sample of them
// spread evenly, the last one always included.
func cutPoints(n, sample int) []int {
	if long() || n <= sample {
		ks := make([]int, n)
		for i := range ks {
			ks[i] = i + 1
		}
		return ks
	}
	set := map[int]bool{}
	for j := 1; j <= sample; j++ {
		set[(j*n+sample-1)/sample] = true
	}
	ks := make([]int, 0, len(set))
	for k := range set {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

// tally counts what the cuts of one command met.
type tally struct {
	calls, ops, cuts, before, after, torn int
	// tornAfter counts torn variants that read as after where the strict
	// cut read as before (allowed: a whole commit reached the disk early).
	tornAfter int
	// refused counts cuts (strict or torn) a read-only doctor refused or
	// found unhealthy: allowed only while the call in flight was creating
	// the database, and then the next writer must recover it.
	refused int
}

// report logs the counts per command in a fixed order.
func report(t *testing.T, what string, counts map[string]*tally, order []string) {
	t.Helper()
	for _, c := range order {
		if n := counts[c]; n != nil {
			t.Logf("%s %-14s calls %2d, operations %4d, cuts %4d: before %4d, after %4d; torn states %4d (%d of them after where the cut was before); refused while creating %d",
				what, c, n.calls, n.ops, n.cuts, n.before, n.after, n.torn, n.tornAfter, n.refused)
		}
	}
}
