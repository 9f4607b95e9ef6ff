package ledgercli_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	model "github.com/stateguard/stateguard/model/ledger"
)

// TestCrashLoopModelNoLedgerYet replays, without a kill, the calls of the
// crash loop's run that failed with seed 1796117618770217517: the first
// kill came 4 µs into round 0, before any file existed, and no call of
// round 1 before its last creates one (create with a parent, start,
// heartbeat, delivery on a missing file: TaskNotFound, spec 13.6), so the
// dry run answers InvalidInput (L7), not zero counts. The crash loop's
// model (applyTo, no file yet) must give every answer, and the file must
// appear with the first create without a parent and not before. The kill
// may also have come after the ledger's directory was made.
func TestCrashLoopModelNoLedgerYet(t *testing.T) {
	bin := ledgerBinary(t)
	parent, t4, t5, t6 := poolID(0), poolID(4), poolID(5), poolID(6)
	round1 := []ledgerOp{
		{Kind: "create", ID: t4, Parent: parent, Now: 1700000009},
		{Kind: "start", ID: t5, Now: 1700000010},
		{Kind: "heartbeat", ID: t5, Now: 1700000011},
		{Kind: "start", ID: t6, Now: 1700000012},
		{Kind: "delivery", ID: t4, Status: "not_applicable", Now: 1700000013},
		{Kind: "delivery", ID: t4, Status: "not_applicable", Now: 1700000014},
		{Kind: "reconcile", ActiveGrace: 3, DeliveryGrace: 3, DryRun: true, Now: 1700000015},
		{Kind: "create", ID: t4, Internal: true, Now: 1700000016},
		// Past the failed run: the file exists now, so the same calls
		// reach the stored tasks.
		{Kind: "reconcile", ActiveGrace: 3, DeliveryGrace: 3, DryRun: true, Now: 1700000017},
		{Kind: "get", ID: t4, Now: 1700000018},
		{Kind: "start", ID: t4, Now: 1700000019},
		{Kind: "reconcile", ActiveGrace: 3, DeliveryGrace: 3, Now: 1700000030},
	}
	const firstFile = 7 // the index of the call that makes the file
	for _, withDir := range []bool{false, true} {
		name := map[bool]string{false: "nothing", true: "directory only"}[withDir]
		t.Run(name, func(t *testing.T) {
			if !withDir {
				platformtest.ParentsCreated(t)
			}
			dir := filepath.Join(t.TempDir(), "ledger")
			if withDir {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			db := filepath.Join(dir, "ledger.sqlite")
			m, exists := &model.Model{}, false
			for i, o := range round1 {
				want := o.applyTo(m, &exists)
				if got := runOp(t, bin, db, o); got != want {
					t.Fatalf("call %d (%s):\n got %s\nwant %s", i, o, got, want)
				}
				_, err := os.Lstat(db)
				if there := !errors.Is(err, fs.ErrNotExist); there != (i >= firstFile) || there != exists {
					t.Fatalf("after call %d (%s): the file exists: %v, the model says %v", i, o, there, exists)
				}
				if i == 6 && want != "error InvalidInput" {
					t.Fatalf("the dry run on no file: the model answers %s, want error InvalidInput (L7)", want)
				}
			}
		})
	}
}

// runOp runs one call of the binary on db with the call's pinned clock and
// returns its answer in apply's comparable form.
func runOp(t *testing.T, bin, db string, o ledgerOp) string {
	t.Helper()
	answer, err := opAnswer(t, bin, db, o)
	if err != nil {
		t.Fatalf("%s: %v", o, err)
	}
	return answer
}

// opAnswer is runOp that returns, instead of failing t, an error of a
// binary that did not run or exit (for callers off the test's goroutine).
func opAnswer(t testing.TB, bin, db string, o ledgerOp) (string, error) {
	var out []byte
	err := platformtest.RetryWineStart(t, func() (err error) {
		cmd := exec.Command(bin, o.args(db)...)
		cmd.Env = append(os.Environ(), o.env()...)
		out, err = cmd.Output()
		return err
	})
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return cliAnswer(string(out), exit.ExitCode()), nil
	}
	return cliAnswer(string(out), 0), err
}
