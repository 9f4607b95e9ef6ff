package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux this runs on; Go cannot ask sysconf without cgo).
const clockTick = 10 * time.Millisecond

// serverMeter reads the CPU time of a PostgreSQL cluster's processes: the
// postmaster forks one backend per connection and reaps it when it ends,
// so the postmaster's own time, the time of the children it reaped and the
// time of its live children add up to everything the cluster has spent.
type serverMeter struct{ pid int }

// reading is the cluster's CPU time at one moment and its processes then.
type reading struct {
	cpu      time.Duration
	children map[int]bool
}

// read takes a reading: the live children's times first, then the
// postmaster's, so a child reaped in between is counted twice rather than
// missed (settle makes that window empty for the measured calls).
func (m serverMeter) read() (reading, error) {
	r := reading{children: map[int]bool{}}
	kids, err := m.childPIDs()
	if err != nil {
		return r, err
	}
	for _, kid := range kids {
		fields, err := statFields(kid)
		if err != nil {
			continue // gone and reaped: its time is now the postmaster's
		}
		r.cpu += ticks(fields, 11) + ticks(fields, 12) // utime, stime
		r.children[kid] = true
	}
	fields, err := statFields(m.pid)
	if err != nil {
		return r, err
	}
	// utime, stime, cutime, cstime
	r.cpu += ticks(fields, 11) + ticks(fields, 12) + ticks(fields, 13) + ticks(fields, 14)
	return r, nil
}

// settle waits until every server process that did not exist at before
// (the backends of the calls just measured) has ended and been reaped, so
// that their whole time is in the postmaster's children's time. A
// process that outlives patience (an autovacuum worker, say) is read live.
func (m serverMeter) settle(before reading, patience time.Duration) error {
	deadline := time.Now().Add(patience)
	for {
		kids, err := m.childPIDs()
		if err != nil {
			return err
		}
		fresh := false
		for _, kid := range kids {
			if !before.children[kid] {
				fresh = true
			}
		}
		if !fresh || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (m serverMeter) childPIDs() ([]int, error) {
	pid := strconv.Itoa(m.pid)
	raw, err := os.ReadFile("/proc/" + pid + "/task/" + pid + "/children")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// statFields are the fields of /proc/PID/stat after the command name, so
// that field 0 is the state (the third field of proc(5)).
func statFields(pid int) ([]string, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, errors.New("unreadable /proc stat")
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 15 {
		return nil, errors.New("short /proc stat")
	}
	return fields, nil
}

// ticks reads field i of statFields as clock ticks.
func ticks(fields []string, i int) time.Duration {
	n, _ := strconv.ParseInt(fields[i], 10, 64)
	return time.Duration(n) * clockTick
}
