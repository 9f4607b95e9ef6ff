package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	model "github.com/stateguard/stateguard/model/ledger"
)

const specPath = "../../spec/task-state-guard.md"

// TestSpecDiagramIsCurrent fails when the block in the spec differs from the
// generated text. Fix with: go run ./tools/statediagram -w spec/task-state-guard.md
func TestSpecDiagramIsCurrent(t *testing.T) {
	doc, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Extract(doc)
	if err != nil {
		t.Fatalf("spec/task-state-guard.md: %v", err)
	}
	if got != Render() {
		t.Fatalf("the state diagram in spec/task-state-guard.md is stale; run: go run ./tools/statediagram -w spec/task-state-guard.md\n--- spec\n%s\n--- generated\n%s", got, Render())
	}
}

func TestRenderCoversEveryEdge(t *testing.T) {
	text := Render()
	if strings.Count(text, "stateDiagram-v2") != 2 {
		t.Fatalf("want two diagrams:\n%s", text)
	}
	for _, m := range []model.Machine{model.TaskMachine, model.DeliveryMachine} {
		for _, e := range m.Edges {
			line := "    " + e.From + " --> " + e.To + " : "
			if !strings.Contains(text, line) {
				t.Errorf("missing edge %q", line)
			}
		}
	}
	for _, want := range []string{"queued --> running : started", "running --> timed_out : deadline_exceeded, restart_stale",
		"pending --> not_applicable : internal_task [task terminal, internal task]"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(text, "running --> queued") || strings.Contains(text, "succeeded --> failed") {
		t.Error("diagram shows a forbidden transition")
	}
}

func TestSplice(t *testing.T) {
	doc := "# Title\n\nintro\n" + BeginMarker + "\nold line 1\nold line 2\n" + EndMarker + "\n\ntail\n"
	got, err := Splice([]byte(doc), "new\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nintro\n" + BeginMarker + "\nnew\n" + EndMarker + "\n\ntail\n"
	if string(got) != want {
		t.Fatalf("got %q", got)
	}
	again, _ := Splice(got, "new\n")
	if !bytes.Equal(again, got) {
		t.Fatal("splice is not idempotent")
	}
	if body, _ := Extract(got); body != "new\n" {
		t.Fatalf("extract: %q", body)
	}
	empty := BeginMarker + "\n" + EndMarker + "\n"
	if got, _ := Splice([]byte(empty), "x\n"); string(got) != BeginMarker+"\nx\n"+EndMarker+"\n" {
		t.Fatalf("empty block: %q", got)
	}
	for _, bad := range []string{"no markers", EndMarker + "\n" + BeginMarker + "\n", BeginMarker} {
		if _, err := Splice([]byte(bad), "x\n"); !errors.Is(err, ErrNoMarkers) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestRunRewritesOnlyTheBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec.md")
	doc := "before\n" + BeginMarker + "\nstale\n" + EndMarker + "\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"-w", path}, &out, &errOut); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errOut.String())
	}
	got, _ := os.ReadFile(path)
	if want := "before\n" + BeginMarker + "\n" + Render() + EndMarker + "\nafter\n"; string(got) != want {
		t.Fatalf("got:\n%s", got)
	}
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc := run([]string{"-w", path}, &out, &errOut); rc != 1 {
		t.Fatalf("missing markers: rc %d", rc)
	}
	out.Reset()
	if rc := run(nil, &out, &errOut); rc != 0 || out.String() != Render() {
		t.Fatalf("print: rc %d", rc)
	}
}
