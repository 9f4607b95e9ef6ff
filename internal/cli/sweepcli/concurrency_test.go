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

// TestConcurrentWritersLoseNoUpdate starts writer processes that all upsert
// distinct items (under one shared lease writer id) and record runs against
// one state file at the same time. The file lock must serialise them: every
// item is present afterwards and the file parses. SWEEP_CONCURRENCY_CALLS
// raises the number of calls per process for a deeper run.
func TestConcurrentWritersLoseNoUpdate(t *testing.T) {
	const writers = 8
	calls := 25
	if n := os.Getenv("SWEEP_CONCURRENCY_CALLS"); n != "" {
		fmt.Sscan(n, &calls)
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yml")
	runCLI := func(args ...string) (string, error) {
		var out []byte
		err := platformtest.RetryWineStart(t, func() (err error) {
			out, err = exec.Command(binPath, append([]string{args[0], "--state", state}, args[1:]...)...).Output()
			return err
		})
		return string(out), err
	}
	if out, err := runCLI("lease-acquire", "--writer", "sweep", "--now", "2026-07-02T12:00:00Z"); err != nil || out != "OK\n" {
		t.Fatalf("acquire: %q %v", out, err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, writers*calls)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for c := 0; c < calls; c++ {
				var out string
				var err error
				if c%5 == 4 {
					out, err = runCLI("run-record", "--writer", "sweep", "--outcome", "partial",
						"--counts", fmt.Sprintf(`{"w": %d, "c": %d}`, w, c), "--timestamp", "2026-07-02T12:10:00Z")
				} else {
					out, err = runCLI("upsert-item", "--source", fmt.Sprintf("src-%d", w), "--id", fmt.Sprint(c),
						"--json", `{"status": "ingested", "title": "t"}`, "--writer", "sweep", "--now", "2026-07-02T12:05:00Z")
				}
				if err != nil || out != "OK\n" {
					errs <- fmt.Sprintf("writer %d call %d: %q %v", w, c, out, err)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := yamlsubset.Parse(data)
	if err != nil {
		t.Fatalf("final file does not parse: %v", err)
	}
	itemsV, _ := doc.Get("items")
	items := itemsV.(*value.Map)
	for w := 0; w < writers; w++ {
		for c := 0; c < calls; c++ {
			if c%5 == 4 {
				continue
			}
			if key := fmt.Sprintf("src-%d:%d", w, c); !items.Has(key) {
				t.Errorf("lost update: item %s missing", key)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
