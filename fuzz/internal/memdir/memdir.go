// Package memdir gives the ledger's fuzz targets a fresh private directory
// per input in memory where the system has one (Linux's /dev/shm tmpfs),
// else t.TempDir(). A ledger commits with synchronous=FULL, so every write
// of an input is an fsync; on a disk that wait, not the code under test,
// set the pace of a campaign. No target's oracle is about
// durability: what a power cut keeps is tested on a fault-injecting file
// system elsewhere. STATEGUARD_FUZZ_DISK=1 keeps the directories on disk.
package memdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// DiskEnv set to 1 makes TempDir use t.TempDir() always.
const DiskEnv = "STATEGUARD_FUZZ_DISK"

var (
	baseOnce sync.Once
	base     string
)

// prefix starts every directory TempDir makes, followed by the making
// process's id and a dash.
const prefix = "stateguard-fuzz-"

// memBase is /dev/shm when it is a directory this process can make
// directories in, else "". The first call also removes what processes
// that no longer run left there: the toolchain ends a fuzzing worker at
// the end of -fuzztime in the middle of an input, before its cleanup, and
// memory is not a disk to leave that on.
func memBase() string {
	baseOnce.Do(func() {
		// Linux only: under Wine "/dev/shm" names Z:\dev\shm, a drive-less
		// path that is no tmpfs to the Windows code.
		if os.Getenv(DiskEnv) == "1" || runtime.GOOS != "linux" {
			return
		}
		const shm = "/dev/shm"
		if fi, err := os.Stat(shm); err != nil || !fi.IsDir() {
			return
		}
		d, err := os.MkdirTemp(shm, "stateguard-probe-")
		if err != nil {
			return
		}
		os.Remove(d)
		base = shm
		removeOrphans(shm)
	})
	return base
}

// TempDir returns a new empty directory, removed when t ends: in memory
// when the system offers it, else t.TempDir().
func TempDir(t testing.TB) string {
	t.Helper()
	if b := memBase(); b != "" {
		d, err := os.MkdirTemp(b, fmt.Sprintf("%s%d-", prefix, os.Getpid()))
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// removeOrphans removes the directories under base that TempDir made in a
// process that is gone (signal 0 cannot reach it).
func removeOrphans(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil {
			if err := p.Signal(syscall.Signal(0)); err == nil || errors.Is(err, syscall.EPERM) {
				continue // still running
			}
		}
		os.RemoveAll(filepath.Join(base, e.Name()))
	}
}
