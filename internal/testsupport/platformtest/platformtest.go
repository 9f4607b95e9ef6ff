// Package platformtest names, in one place, every platform condition under
// which a test does not run, and builds the command binaries that process
// tests run. spec/README.md lists the conditions ("Platform conditions of
// the tests"); a test that needs one calls it first, so the reason for a
// skip reads the same everywhere:
//
//	platformtest.POSIXModes(t)
//
// These are facts of a platform, not missing equipment: they skip under
// CI=true too. A test of a Windows path says so by its name and runs there.
// Files whose name ends in _unix_test.go or _linux_test.go, or that carry a
// build constraint, are the compile-time form of the same conditions
// (signals, process groups, OFD locks, FUSE) and are listed beside them.
package platformtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Windows is true where the code under test takes its Windows paths.
const Windows = runtime.GOOS == "windows"

// HasPOSIXModes is false where files carry no POSIX permission bits: on
// Windows the directory's ACL decides, and Go reports 0666 or 0444. A test
// whose other checks hold everywhere guards only its mode check with it.
const HasPOSIXModes = !Windows

// POSIXModes skips t where HasPOSIXModes is false.
func POSIXModes(t testing.TB) {
	t.Helper()
	if !HasPOSIXModes {
		t.Skip("platform condition POSIXModes: no POSIX permission bits on Windows")
	}
}

// CreatesParents is false where a writable open never creates a missing
// parent directory (Windows, spec/task-state-guard.md 11.3).
const CreatesParents = !Windows

// ParentsCreated skips t where CreatesParents is false.
func ParentsCreated(t testing.TB) {
	t.Helper()
	if !CreatesParents {
		t.Skip("platform condition ParentsCreated: Windows never creates a ledger's parent directory")
	}
}

// ReparsePoints skips t where a symbolic link that os.Symlink makes is not
// seen as one by the calls under test: under Wine it is a host symlink that
// Wine's file calls see through, with no reparse point attribute. Real
// Windows and POSIX systems show the link.
func ReparsePoints(t testing.TB) {
	t.Helper()
	if underWine() {
		t.Skip("platform condition ReparsePoints: Wine shows a symbolic link as the file it names")
	}
}

// DeletedNamesUnopenable skips t where a deleted file that another handle
// still holds can be opened again by its name: under Wine. On POSIX the
// unlink removes the name; on Windows DeleteFile removes it or leaves it
// refusing every open (ERROR_ACCESS_DENIED) until the last handle closes,
// as its documentation says. Under Wine 8 such a name stays openable, so
// SQLite can read a rollback journal its writer has committed and deleted
// as a hot journal and roll the committed transaction back (a fresh
// ledger's header truncated away while two Opens race to set it up).
// TestDeletedNamesUnopenable pins the fact.
func DeletedNamesUnopenable(t testing.TB) {
	t.Helper()
	if underWine() {
		t.Skip("platform condition DeletedNamesUnopenable: under Wine a deleted file another handle holds stays openable by its name")
	}
}

// HasOFDLocks is false where open file description locks do not exist (all
// but Linux): the read-only view then relies on change detection alone, and
// a read beside writers that never pause may give up (spec 12.4).
const HasOFDLocks = runtime.GOOS == "linux"

// OFDLocks skips t where HasOFDLocks is false.
func OFDLocks(t testing.TB) {
	t.Helper()
	if !HasOFDLocks {
		t.Skip("platform condition OFDLocks: no OFD locks on " + runtime.GOOS)
	}
}

// BinDirEnv names the folder of prebuilt command binaries: tools/winetest
// builds them for Windows, because a test under Wine cannot run the go
// command.
const BinDirEnv = "STATEGUARD_TEST_BINDIR"

// GoCommand skips t where the go command cannot run from the test: under
// tools/winetest's Wine run (a Linux go cannot be started from inside
// Wine). Tests that only need the command binaries use CommandBinary.
func GoCommand(t testing.TB) {
	t.Helper()
	if os.Getenv(BinDirEnv) != "" {
		t.Skip("platform condition GoCommand: no go command inside the Wine run")
	}
}

// CommandBinary returns the binary of cmd/<name> (such as "sweep-state"):
// the prebuilt one from BinDirEnv when set, otherwise one built into dir.
func CommandBinary(dir, name string) (string, error) {
	exe := name
	if Windows {
		exe += ".exe"
	}
	if prebuilt := os.Getenv(BinDirEnv); prebuilt != "" {
		p := filepath.Join(prebuilt, exe)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinDirEnv, prebuilt, err)
		}
		return p, nil
	}
	p := filepath.Join(dir, exe)
	out, err := exec.Command("go", "build", "-o", p, "github.com/stateguard/stateguard/cmd/"+name).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", name, err, out)
	}
	return p, nil
}

// ACLArgs returns task-state-guard's args with the external-ACL
// acknowledgement first on Windows, where opening a ledger requires it
// (spec/task-state-guard.md 11.3), and args unchanged elsewhere. Giving the
// flag twice is harmless.
func ACLArgs(args ...string) []string {
	if !Windows {
		return args
	}
	return append([]string{"--allow-external-acl"}, args...)
}

// PermissionModel is the permission_model task-state-guard reports here.
func PermissionModel() string {
	if Windows {
		return "external_acl"
	}
	return "posix_mode"
}

// ByteArgs is false where a command line cannot carry bytes that are not
// valid UTF-8 (Windows passes it as UTF-16, so such bytes never arrive).
const ByteArgs = !Windows

// ScriptCondition answers the conditions the txtar scripts use, one per
// condition above: [posixmodes], [byteargv], [createsparents],
// [reparsepoints].
// Any other name is left to testscript (ok false).
func ScriptCondition(cond string) (holds, ok bool) {
	switch cond {
	case "posixmodes":
		return HasPOSIXModes, true
	case "byteargv":
		return ByteArgs, true
	case "createsparents":
		return CreatesParents, true
	case "reparsepoints":
		return !underWine(), true
	}
	return false, false
}

// LedgerParent returns db after making its parent directory (mode 0700)
// where a writable open never makes it (CreatesParents is false), so a
// test of something else can create a ledger there; elsewhere the open
// makes it, as the test expects.
func LedgerParent(t testing.TB, db string) string {
	t.Helper()
	if !CreatesParents {
		if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return db
}
