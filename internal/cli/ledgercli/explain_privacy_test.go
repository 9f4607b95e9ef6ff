package ledgercli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// explainedCall runs the command line with TASK_STATE_GUARD_EXPLAIN=1 and
// the test clock at now.
func explainedCall(now string, args ...string) (int, string, string) {
	env := pinnedEnv(now)
	var stdout, stderr bytes.Buffer
	// Windows needs the acknowledgement to open at all.
	rc := runExplained(platformtest.ACLArgs(args...), &stdout, &stderr, func(k string) string {
		if k == ExplainEnv {
			return "1"
		}
		return env(k)
	})
	return rc, stdout.String(), stderr.String()
}

// The explanation line of a failure names the class and a fixed reason,
// never a task id, in whichever form the caller spelt it (canonical,
// upper case, braces, urn:uuid:, 32 digits), nor a code, a hash or the
// path: for failures of every class, from the command line's own checks
// and from the ledger's, and for create --task-id among them.
func TestExplainLineNeverHoldsAnInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dir-PATHMARK")
	db := filepath.Join(dir, "ledger.sqlite")
	// Made here: a ledger on Windows makes no missing directories.
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const id = "5ec2e7aa-0000-4000-8000-00000000beef"
	forms := []string{id, strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id, strings.ReplaceAll(id, "-", "")}
	if rc, out, errText := explainedCall("1000", "--db", db, "create", "--task-id", id, "--payload-sha256", strings.Repeat("ab", 32)); rc != 0 {
		t.Fatalf("setup: %d %s %s", rc, out, errText)
	}
	const other = "0dd0dd00-0000-4000-8000-00000000cafe"
	cases := [][]string{
		{"create", "--task-id", "{FORM}", "--internal"},             // StateConflict: other parameters
		{"create", "--task-id", other, "--parent-id", "{FORM}x"},    // InvalidInput: malformed parent
		{"create", "--task-id", "FORMxyz"},                          // InvalidInput: malformed id
		{"create", "--task-id", other, "--payload-sha256", "FORM"},  // InvalidInput: bad hash
		{"create", "--task-id", other, "--timeout-seconds", "FORM"}, // InvalidInput: not a number
		{"start", other}, // TaskNotFound
		{"close", "FORM", "--status", "succeeded", "--code", "secret_FORM"}, // InvalidInput: unknown code
		{"delivery", "FORM", "--status", "delivered"},                       // StateConflict: not terminal
		{"get", other},
		{"children", "FORM-"},
		{"list", "--after", "FORM0"},
		{"start", "FORM", "extra-FORM"},
		{"--db", filepath.Join(dir, "missing-FORM.sqlite"), "get", "FORM"},
	}
	classes := map[string]bool{}
	for _, form := range forms {
		for _, c := range cases {
			args := []string{"--db", db}
			if c[0] == "--db" {
				args = nil
			}
			for _, a := range c {
				args = append(args, strings.ReplaceAll(a, "FORM", form))
			}
			rc, out, errText := explainedCall("2000", args...)
			if rc == 0 {
				t.Errorf("%v: succeeded: %s", args, out)
				continue
			}
			class, _, ok := strings.Cut(strings.TrimPrefix(errText, "task-state-guard: "), ":")
			if !ok || !strings.HasPrefix(errText, "task-state-guard: ") || strings.Count(errText, "\n") != 1 {
				t.Errorf("%v: explanation %q, want one line", args, errText)
				continue
			}
			classes[class] = true
			low := strings.ToLower(errText)
			for _, held := range []string{"beef", "cafe", "secret", "pathmark", "abab", "ledger.sqlite"} {
				if strings.Contains(low, held) {
					t.Errorf("%v: explanation %q holds %q", args, errText, held)
				}
			}
		}
	}
	for _, class := range []string{"InvalidInput", "TaskNotFound", "StateConflict"} {
		if !classes[class] {
			t.Errorf("no case answered %s", class)
		}
	}
}

// An applied reconcile on a database that does not exist answers
// InvalidInput and creates nothing, neither the file nor its directory
// nor a sidecar, whether the directory exists or not (divergence L7); so
// does the dry run, and so do doctor and prune.
func TestReconcileOnAMissingDatabaseCreatesNothing(t *testing.T) {
	for _, withDir := range []bool{false, true} {
		for _, args := range [][]string{
			{"reconcile"},
			{"reconcile", "--active-grace-seconds", "0", "--delivery-grace-seconds", "0"},
			{"reconcile", "--dry-run"},
			{"prune", "--ended-before", "5000"},
			{"doctor"},
		} {
			root := t.TempDir()
			dir := filepath.Join(root, "ledger")
			if withDir {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			db := filepath.Join(dir, "tasks.sqlite")
			rc, out, errText := explainedCall("1000", append([]string{"--db", db}, args...)...)
			if rc != 2 || out != `{"error":"InvalidInput","ok":false}`+"\n" {
				t.Errorf("directory %v, %v: exit %d %q %q; want InvalidInput", withDir, args, rc, out, errText)
			}
			var left []string
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && p != root && p != dir {
					left = append(left, p)
				}
				return nil
			})
			_, err := os.Lstat(dir)
			if len(left) != 0 || withDir != (err == nil) {
				t.Errorf("directory %v, %v: left %v, directory there: %v", withDir, args, left, err == nil)
			}
		}
	}
}
