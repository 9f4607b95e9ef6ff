package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
)

// referenceOutputs returns the "[label] output: ..." lines of the reference
// demo's recorded stdout (fixtures/ledger/demo-output.txt): preview, apply,
// idempotent recheck and doctor. The first three are also the lines the
// seed README shows.
func referenceOutputs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testfixtures.Dir(t, "ledger"), "demo-output.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.Contains(line, "] output: ") {
			outputs = append(outputs, line)
		}
	}
	if len(outputs) != 4 {
		t.Fatalf("demo-output.txt holds %d output lines, want 4", len(outputs))
	}
	return outputs
}

// seedLines are the three aggregate lines the seed README prints; the
// recording must agree with them too.
var seedLines = []string{
	`[preview] output: {"ok":true,"reconcile":{"active_examined":2,"applied":false,"deliveries_failed":1,"deliveries_not_applicable":1,"dry_run":true,"fresh_active_retained":1,"pending_delivery_examined":3,"pending_delivery_retained":1,"tasks_timed_out":1}}`,
	`[apply] output: {"ok":true,"reconcile":{"active_examined":2,"applied":true,"deliveries_failed":1,"deliveries_not_applicable":1,"dry_run":false,"fresh_active_retained":1,"pending_delivery_examined":3,"pending_delivery_retained":1,"tasks_timed_out":1}}`,
	`[idempotent-recheck] output: {"ok":true,"reconcile":{"active_examined":1,"applied":true,"deliveries_failed":0,"deliveries_not_applicable":0,"dry_run":false,"fresh_active_retained":1,"pending_delivery_examined":1,"pending_delivery_retained":1,"tasks_timed_out":0}}`,
}

func TestDemoIsDeterministicAndMatchesTheSeed(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var first, second bytes.Buffer
	if status := run(&first); status != 0 {
		t.Fatalf("first run exited %d:\n%s", status, first.String())
	}
	if status := run(&second); status != 0 {
		t.Fatalf("second run exited %d:\n%s", status, second.String())
	}
	if first.String() != second.String() {
		t.Fatalf("two runs differ:\n%s\n---\n%s", first.String(), second.String())
	}
	var outputs, sweep []string
	for _, line := range strings.Split(strings.TrimSuffix(first.String(), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "[sweep] output: "):
			sweep = append(sweep, strings.TrimPrefix(line, "[sweep] output: "))
		case strings.Contains(line, "] output: "):
			outputs = append(outputs, line)
		}
	}
	checkSweepWalk(t, sweep)
	if len(outputs) != 4 {
		t.Fatalf("want 4 output lines, got %d:\n%s", len(outputs), first.String())
	}
	want := referenceOutputs(t)
	for i := range want {
		if outputs[i] != want[i] {
			t.Errorf("output line %d:\n got %s\nwant %s", i+1, outputs[i], want[i])
		}
	}
	for i, line := range seedLines {
		if want[i] != line {
			t.Errorf("the recording's output line %d differs from the seed's", i+1)
		}
	}
	// The demo removes its temporary directory.
	left, err := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "stateguard-demo-*"))
	if err != nil || len(left) != 0 {
		t.Fatalf("temporary directories left behind: %v", left)
	}
	// The path placeholder hides the real temporary directory.
	if strings.Contains(first.String(), os.Getenv("TMPDIR")) {
		t.Fatal("output leaks the temporary path")
	}
}

// checkSweepWalk pins the sweep part's story: a second writer is LOCKED out,
// validate sends the closed item without evidence back to fix_pending, and
// the sensitive item's body never comes back from the file.
func checkSweepWalk(t *testing.T, out []string) {
	t.Helper()
	want := []string{"OK", "LOCKED", "OK", "OK", "OK", "OK", `{"downgraded": ["mail:42"]}`, "OK", "OK", "OK"}
	if len(out) != len(want)+1 {
		t.Fatalf("sweep walk printed %d output lines, want %d:\n%s", len(out), len(want)+1, strings.Join(out, "\n"))
	}
	for i, w := range want {
		if out[i] != w {
			t.Errorf("sweep output line %d: got %s, want %s", i+1, out[i], w)
		}
	}
	final := out[len(out)-1]
	if !strings.Contains(final, `"status": "fix_pending"`) || strings.Contains(final, "private text") || !strings.Contains(final, "stack trace here") {
		t.Errorf("final read shows the wrong state: %s", final)
	}
}
