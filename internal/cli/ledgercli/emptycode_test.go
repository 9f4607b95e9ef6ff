package ledgercli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestEmptyCodeOption: --code with an empty value (as its own argument or
// as --code=) gives a code, the empty one, which is malformed (spec 3,
// 13.2, 19.1 item 20): the command line hands it on as given (not as
// absent), and close and delivery answer InvalidInput, exit 2, leaving the
// task as it was; without --code the same calls succeed. Planted bug: an
// empty --code dropped as if absent (the script options_empty_values.txtar
// was the only test).
func TestEmptyCodeOption(t *testing.T) {
	for _, argv := range [][]string{
		{"--db", "x", "close", testID, "--status", "failed", "--code", ""},
		{"--db", "x", "delivery", testID, "--status", "failed", "--code="},
	} {
		inv, _, err := parseCommandLine(argv)
		if err != nil || inv.code == nil || *inv.code != "" {
			t.Fatalf("%q: code %v (%v), want the empty code given", argv, inv.code, err)
		}
	}
	if inv, _, err := parseCommandLine([]string{"--db", "x", "close", testID, "--status", "failed"}); err != nil || inv.code != nil {
		t.Fatalf("close without --code: code %v (%v), want none", inv.code, err)
	}

	env := pinnedEnv("1700000000")
	dir := filepath.Join(t.TempDir(), "d")
	os.Mkdir(dir, 0o700)
	db := filepath.Join(dir, "ledger.sqlite")
	call := func(args ...string) (int, string) {
		var out bytes.Buffer
		st := run(platformtest.ACLArgs(append([]string{"--db", db}, args...)...), &out, env)
		return st, strings.TrimSpace(out.String())
	}
	if st, out := call("create", "--task-id", testID); st != 0 {
		t.Fatalf("create: %d %s", st, out)
	}
	_, before := call("get", testID)
	for _, args := range [][]string{
		{"close", testID, "--status", "failed", "--code", ""},
		{"close", testID, "--status", "succeeded", "--code="},
	} {
		if st, out := call(args...); st != 2 || out != `{"error":"InvalidInput","ok":false}` {
			t.Errorf("%q: exit %d %s, want exit 2 InvalidInput", args, st, out)
		}
	}
	if _, after := call("get", testID); after != before {
		t.Fatalf("a refused close changed the task:\n%s\n%s", before, after)
	}
	if st, out := call("close", testID, "--status", "failed"); st != 0 {
		t.Fatalf("close without --code: %d %s", st, out)
	}
	_, before = call("get", testID)
	for _, args := range [][]string{
		{"delivery", testID, "--status", "failed", "--code", ""},
		{"delivery", testID, "--status", "delivered", "--code="},
	} {
		if st, out := call(args...); st != 2 || out != `{"error":"InvalidInput","ok":false}` {
			t.Errorf("%q: exit %d %s, want exit 2 InvalidInput", args, st, out)
		}
	}
	if _, after := call("get", testID); after != before {
		t.Fatalf("a refused delivery changed the task:\n%s\n%s", before, after)
	}
	if st, out := call("delivery", testID, "--status", "failed"); st != 0 {
		t.Fatalf("delivery without --code: %d %s", st, out)
	}
}
