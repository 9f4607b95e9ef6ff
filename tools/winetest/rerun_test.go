package main

import (
	"strings"
	"testing"
)

// TestRerunFailed: a package whose only failures are Wine failing to start
// a process is rerun for those tests alone; a pass on the rerun counts as
// passed (and says so), a repeated failure stays a failure.
func TestRerunFailed(t *testing.T) {
	first := result{pkg: "p", pass: 5, skip: 1, fail: 1, failed: []string{"TestA"}, binaryFailed: true,
		failOutput: "fork/exec Z:\\bin\\sweep-state.exe: Internal error.\n"}
	if !wineStartFailure(first) {
		t.Fatal("the Wine start failure was not recognised")
	}
	if wineStartFailure(result{fail: 1, failOutput: "stdout differs"}) {
		t.Fatal("an ordinary failure was taken for a Wine start failure")
	}
	var pattern string
	ok := rerunFailed(first, func(p string) result { pattern = p; return result{pass: 1} })
	if pattern != "^(TestA)$" || ok.fail != 0 || ok.binaryFailed || ok.pass != 6 || ok.skip != 1 || ok.note == "" {
		t.Errorf("rerun that passed: pattern %q, result %+v", pattern, ok)
	}
	bad := rerunFailed(first, func(string) result {
		return result{fail: 1, failed: []string{"TestA"}, binaryFailed: true}
	})
	if bad.fail != 1 || !bad.binaryFailed || bad.pass != 5 {
		t.Errorf("rerun that failed again: %+v", bad)
	}
}

// TestFailedLeaves: the report of a failed test shows the subtests that
// failed themselves, not their parents, and not another test's.
func TestFailedLeaves(t *testing.T) {
	failed := []string{"TestR/edge/a", "TestR/edge", "TestR/seq/b", "TestR/seq", "TestR", "TestS/x", "TestS", "TestRx/y"}
	got := strings.Join(failedLeaves("TestR", failed), " ")
	if got != "TestR/edge/a TestR/seq/b" {
		t.Errorf("leaves of TestR: %q", got)
	}
	if got := failedLeaves("TestT", failed); got != nil {
		t.Errorf("leaves of a test with no failed subtest: %q", got)
	}
}
