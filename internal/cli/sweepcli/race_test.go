package sweepcli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/model/value"
)

// TestEveryMutatingSubcommandRaces runs one process per mutating
// subcommand (validate, upsert-item, cursor-advance, lease-acquire,
// lease-release, run-record, import-legacy) against one state file at the
// same time. Every one of them rewrites the whole file, so a subcommand
// that wrote without the file lock would, sooner or later, write back a
// document loaded before another writer's change and lose it. Afterwards
// every change a call answered OK for must be in the file, and every
// upsert answered LEASE-LOST must not. SWEEP_RACE_CALLS raises the number
// of calls per process.
func TestEveryMutatingSubcommandRaces(t *testing.T) {
	calls := 20
	if n := os.Getenv("SWEEP_RACE_CALLS"); n != "" {
		fmt.Sscan(n, &calls)
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yml")
	run := func(args ...string) string {
		var out []byte
		err := platformtest.RetryWineStart(t, func() (err error) {
			out, err = exec.Command(binPath, append([]string{args[0], "--state", state}, args[1:]...)...).Output()
			return err
		})
		if err != nil {
			return "exec failed: " + err.Error()
		}
		return string(out)
	}
	const now = "2026-07-02T12:00:00Z"
	mustOK := func(args ...string) {
		if out := run(args...); !strings.HasPrefix(out, "OK\n") {
			t.Fatalf("%q: %q", args, out)
		}
	}
	mustOK("lease-acquire", "--writer", "sweep", "--now", now)
	// The cursor worker's items exist before it starts.
	for c := 0; c < calls; c++ {
		mustOK("upsert-item", "--source", "cur", "--id", fmt.Sprint(c), "--json", `{"status": "ingested"}`, "--writer", "sweep", "--now", now)
	}
	for c := 0; c < calls; c++ {
		legacy := filepath.Join(dir, fmt.Sprintf("legacy-%d.json", c))
		text := fmt.Sprintf(`{"items": [{"id": "imp-%d", "status": "ingested", "title": "imported"}]}`, c)
		if err := os.WriteFile(legacy, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A long body makes every load and write take a little longer, which
	// widens the window a lockless writer would need.
	body := strings.Repeat("x", 4000)

	var mu sync.Mutex
	upserted := map[string]string{} // item key -> first line of the answer
	var lastCursor, lastCounts string
	var leaseHeld bool
	var wg sync.WaitGroup
	worker := func(f func(c int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := 0; c < calls; c++ {
				f(c)
			}
		}()
	}
	worker(func(c int) { // closed items without evidence: validate's food
		for w := 0; w < 3; w++ {
			key := fmt.Sprintf("up-%d", w)
			out := run("upsert-item", "--source", key, "--id", fmt.Sprint(c),
				"--json", fmt.Sprintf(`{"status": "closed", "body": %q}`, body), "--writer", "sweep", "--now", now)
			mu.Lock()
			upserted[key+":"+fmt.Sprint(c)] = strings.SplitN(out, "\n", 2)[0]
			mu.Unlock()
		}
	})
	// Two validators: validate writes only when it downgrades something,
	// so it needs the pressure to meet the other writers often.
	for v := 0; v < 2; v++ {
		worker(func(c int) {
			if out := run("validate"); !strings.HasPrefix(out, "OK\n") {
				t.Errorf("validate: %q", out)
			}
		})
	}
	worker(func(c int) {
		out := run("cursor-advance", "--source", "cur", "--to", fmt.Sprint(c), "--past-item", fmt.Sprint(c), "--writer", "sweep", "--now", now)
		if out == "OK\n" {
			mu.Lock()
			lastCursor = fmt.Sprint(c)
			mu.Unlock()
		} else if out != "LEASE-LOST\n" {
			t.Errorf("cursor-advance %d: %q", c, out)
		}
	})
	worker(func(c int) { // the lease comes and goes; owned calls see LEASE-LOST meanwhile
		release := run("lease-release", "--writer", "sweep")
		acquire := run("lease-acquire", "--writer", "sweep", "--now", now)
		if release != "OK\n" || acquire != "OK\n" {
			t.Errorf("release %q, acquire %q", release, acquire)
		}
		if c == calls-1 {
			mu.Lock()
			leaseHeld = true
			mu.Unlock()
		}
	})
	worker(func(c int) {
		counts := fmt.Sprintf(`{"call": %d}`, c)
		if out := run("run-record", "--writer", "sweep", "--outcome", "partial", "--counts", counts, "--timestamp", now); out != "OK\n" {
			t.Errorf("run-record: %q", out)
		}
		mu.Lock()
		lastCounts = fmt.Sprint(c)
		mu.Unlock()
	})
	worker(func(c int) {
		out := run("import-legacy", "--file", filepath.Join(dir, fmt.Sprintf("legacy-%d.json", c)))
		if want := "OK\n{\"cursors_imported\": 0, \"items_imported\": 1}\n"; out != want {
			t.Errorf("import-legacy %d: %q", c, out)
		}
	})
	wg.Wait()

	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := yamlsubset.Parse(data)
	if err != nil {
		t.Fatalf("final file does not parse: %v", err)
	}
	items := mapAt(doc, "items")
	okCount := 0
	for key, word := range upserted {
		switch {
		case word == "OK" && !items.Has(key):
			t.Errorf("lost update: upsert of %s answered OK but the item is gone", key)
		case word == "OK":
			okCount++
		case word == "LEASE-LOST" && items.Has(key):
			t.Errorf("upsert of %s answered LEASE-LOST but wrote", key)
		case word != "LEASE-LOST" && word != "OK":
			t.Errorf("upsert of %s: %q", key, word)
		}
	}
	if okCount == 0 {
		t.Error("no upsert got through: the race exercised nothing")
	}
	for c := 0; c < calls; c++ {
		if key := fmt.Sprintf("imp-%d", c); !items.Has(key) {
			t.Errorf("lost update: imported item %s is gone", key)
		}
	}
	if lastCursor != "" {
		cur, _ := mapAt(mapAt(doc, "sources"), "cur").Get("cursor")
		if cur != lastCursor {
			t.Errorf("cursor %v, want the last one advanced, %s", cur, lastCursor)
		}
	}
	counts, _ := mapAt(mapAt(doc, "last_run"), "counts").Get("call")
	if fmt.Sprint(counts) != lastCounts {
		t.Errorf("last_run counts call=%v, want %s", counts, lastCounts)
	}
	if leaseHeld != doc.Has("lease") {
		t.Errorf("lease present %v, want %v", doc.Has("lease"), leaseHeld)
	}
	// The last validate ran after some upserts; any closed item it saw is
	// fix_pending now, so at least one downgrade must have stuck.
	downgraded := 0
	for _, k := range items.Keys() {
		if st, _ := mapAt(items, k).Get("status"); st == "fix_pending" {
			downgraded++
		}
	}
	if downgraded == 0 {
		t.Error("validate never downgraded anything: it did not race")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// mapAt returns m[k] as a map, or an empty map.
func mapAt(m *value.Map, k string) *value.Map {
	v, _ := m.Get(k)
	if sub, ok := v.(*value.Map); ok {
		return sub
	}
	return value.NewMap()
}
