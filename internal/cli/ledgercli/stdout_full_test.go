package ledgercli_test

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// fullWriter refuses every write, as stdout on a full disk or a closed pipe.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestUnwritableStdoutExitsThree: when stdout cannot take the answer the
// exit status is 3, help and version included, never 0 (the
// sweep CLI exits 1 there, each as its reference class list allows). The
// call itself took effect: the next call sees the task.
func TestUnwritableStdoutExitsThree(t *testing.T) {
	db := platformtest.LedgerParent(t, filepath.Join(t.TempDir(), "ledger", "tasks.sqlite"))
	for _, args := range [][]string{
		{"--db", db, "init"},
		{"--db", db, "create", "--task-id", "123e4567-e89b-42d3-a456-426614174000"},
		{"--db", db, "doctor"},
		{"--version"},
		{"--help"},
	} {
		if rc := ledgercli.Main(platformtest.ACLArgs(args...), fullWriter{}, io.Discard); rc != 3 {
			t.Errorf("%v: exit %d, want 3", args, rc)
		}
	}
	var out strings.Builder
	if rc := ledgercli.Main(platformtest.ACLArgs("--db", db, "get", "123e4567-e89b-42d3-a456-426614174000"), &out, io.Discard); rc != 0 {
		t.Errorf("get after the unanswered create: exit %d, want 0: %s", rc, out.String())
	}
}
