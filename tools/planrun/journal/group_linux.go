package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// groupAlive reports whether a process of group pgid is still running.
// A SIGKILLed process first finishes the system call it is in (a write, an
// fsync, an unlink), so the group is not dead when its leader is reaped.
// Zombies count as dead: they have released every file and lock (and
// here nothing may reap them: the orphans go to PID 1, which in a
// container need not reap).
func groupAlive(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(string(f[2])); g == pgid && string(f[0]) != "Z" && string(f[0]) != "X" {
			return true
		}
	}
	return false
}
