//go:build unix

package sweepcore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stateguard/stateguard/internal/storage/durable"
)

// TestValidateHoldsTheFileLock: validate writes the file (it downgrades
// closed items without evidence), so it holds the flock on <state>.lock
// from its load to its write (spec 12), as every mutating command does.
// At the moment its new file is synced, a second open of the lock file
// cannot take the lock. Planted bug: validate not counted as mutating (the
// other test of this, Linux only, watches a child process wait in the
// kernel).
func TestValidateHoldsTheFileLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yml")
	doc := "schema_version: 1\nsources: {}\nitems:\n  \"s:1\":\n    source: \"s\"\n    status: \"closed\"\n    id: \"1\"\n"
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	syncs := 0
	var lockErr error
	ops := durable.DefaultOps()
	realSync := ops.SyncFile
	ops.SyncFile = func(f *os.File) error {
		syncs++
		fd, err := unix.Open(durable.LockPath(p), unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			lockErr = err
		} else {
			lockErr = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
			unix.Close(fd)
		}
		return realSync(f)
	}
	defer durable.SetOps(ops)()
	res := fixedEngine().run(p, Validate{})
	if res.Word != WordOK || syncs != 1 {
		t.Fatalf("validate: %s %q, %d writes; want OK and one write", res.Word, res.Reason, syncs)
	}
	if lockErr != unix.EWOULDBLOCK {
		t.Fatalf("while validate wrote, a second open of the lock file took the lock or could not open it (%v): validate did not hold it", lockErr)
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), "fix_pending") {
		t.Fatalf("validate did not downgrade the item:\n%s", b)
	}
}

// TestStateFileOfAnotherOwnerIsCorrupt: a state file the effective user
// does not own is CORRUPT with its own reason (spec 2), before it is read
// as YAML, whoever runs the test: as root the test gives a file to another
// user, otherwise it points the engine at a root-owned system file (read
// is not mutating, so nothing is created beside it). Planted bug: the
// owner check removed from the load (the other test needs root).
func TestStateFileOfAnotherOwnerIsCorrupt(t *testing.T) {
	const reason = "the state file is not owned by the effective user"
	var p string
	if os.Geteuid() == 0 {
		p = filepath.Join(t.TempDir(), "state.yml")
		if err := os.WriteFile(p, []byte("schema_version: 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 4242, 4242); err != nil {
			t.Skipf("cannot give the file to another user: %v", err)
		}
	} else {
		p = "/etc/passwd"
		fi, err := os.Stat(p)
		if err != nil || durable.OwnedByEffectiveUser(fi) || !fi.Mode().IsRegular() {
			t.Skipf("%s is not a regular file of another user here", p)
		}
	}
	if res := fixedEngine().run(p, Read{}); res.Word != WordCorrupt || res.Reason != reason {
		t.Fatalf("read of a file another user owns: %s %q, want CORRUPT %q", res.Word, res.Reason, reason)
	}
}
