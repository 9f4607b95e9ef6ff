package depcheck

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// moduleRoot is two levels up from this package.
const moduleRoot = "../.."

const ownModule = "github.com/stateguard/stateguard"

// allowedThirdParty are the module path prefixes the runtime may link.
// modernc.org/sqlite brings its C-to-Go runtime and a few small helpers.
var allowedThirdParty = []string{
	"modernc.org/",
	"golang.org/x/sys/",
	"github.com/google/uuid",
	"github.com/dustin/go-humanize",
	"github.com/mattn/go-isatty",
	"github.com/ncruces/go-strftime",
	"github.com/remyoudompheng/bigfft",
	// The PostgreSQL engine's driver and what it needs (the password file,
	// the service file, SASLprep for SCRAM); not its pool (puddle), which
	// the engine does not use. A file ledger never reaches them:
	// TestFileLedgerOpensNoSocket proves it at the system call level.
	"github.com/jackc/pgx/v5",
	"github.com/jackc/pgpassfile",
	"github.com/jackc/pgservicefile",
	"golang.org/x/text/",
}

// networkPackages may never be imported by this project's own runtime code.
var networkPackages = []string{"net", "net/http", "net/rpc", "net/smtp", "crypto/tls", "net/mail"}

func runtimeDeps(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./cmd/...")
	cmd.Dir = moduleRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// testSupport is where the test machinery lives; no binary may link it.
const testSupport = ownModule + "/internal/testsupport/"

// TestRuntimeDependencies fails when cmd/ starts linking a module outside the
// allowed set, a package of test machinery (internal/testsupport), or when
// the project's own runtime packages import a network package.
func TestRuntimeDependencies(t *testing.T) {
	platformtest.GoCommand(t)
	deps := runtimeDeps(t)
	if len(deps) == 0 {
		t.Fatal("no dependencies listed: the check would be vacuous")
	}
	var own []string
	for _, p := range deps {
		if strings.HasPrefix(p, testSupport) {
			t.Errorf("cmd/ links %s, which is test machinery", p)
		}
		if strings.HasPrefix(p, ownModule) {
			own = append(own, p)
			continue
		}
		ok := false
		for _, prefix := range allowedThirdParty {
			if strings.HasPrefix(p, prefix) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("cmd/ links %s, which is not an allowed runtime dependency", p)
		}
	}
	for _, p := range own {
		cmd := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", p)
		cmd.Dir = moduleRoot
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", p, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			for _, n := range networkPackages {
				if imp == n {
					t.Errorf("%s imports network package %s", p, imp)
				}
			}
		}
	}
}

// buildCommands builds every command under cmd/ into a fresh directory with
// the given cgo setting and returns the binaries.
func buildCommands(t *testing.T, cgo string, pkgs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	build.Dir = moduleRoot
	build.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(bins) == 0 {
		t.Fatal("no binaries built")
	}
	return bins
}

// symbols is the binary's symbol table as go tool nm prints it.
func symbols(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", bin, err)
	}
	syms := string(out)
	if !strings.Contains(syms, "main.main") {
		t.Fatalf("%s: symbol table looks empty", bin)
	}
	return syms
}

// notStatic lists why bin would not start without a C library: it links
// runtime/cgo, or (for ELF) it names a program interpreter or shared
// libraries. Empty means static.
func notStatic(t *testing.T, bin string) []string {
	t.Helper()
	var why []string
	if strings.Contains(symbols(t, bin), " runtime/cgo") {
		why = append(why, "links runtime/cgo")
	}
	f, err := elf.Open(bin)
	if err != nil {
		return why // not ELF (a cross-built or Mach-O binary): the symbol check stands alone
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			why = append(why, "names a program interpreter")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		why = append(why, "needs shared libraries "+strings.Join(libs, ", "))
	}
	return why
}

// linksServerEngine are the commands that link the PostgreSQL engine, and
// with it a dialer, by design: task-state-guard opens it for a
// postgres:// --db, and the demo links task-state-guard's command line.
// Their proof that a file ledger opens no socket is at the system call
// level (TestFileLedgerOpensNoSocket) and in the import graph
// (TestNetworkOnlyThroughTheServerEngine).
var linksServerEngine = map[string]bool{"task-state-guard": true, "stateguard-demo": true}

// TestBinariesHaveNoSocketCode builds every command as the README installs
// it (CGO_ENABLED=0) and inspects its symbol table: in a command that does
// not link the PostgreSQL engine, no dialer, listener or HTTP client may
// survive dead-code elimination; in one that does, the dialer is there
// (else linksServerEngine is stale). Every binary is static (no
// runtime/cgo, no shared library), so it starts in a scratch image.
// (modernc.org/sqlite links net/url for its DSN parser and a UUID helper
// that can list interfaces; neither opens a connection.)
func TestBinariesHaveNoSocketCode(t *testing.T) {
	platformtest.GoCommand(t)
	if testing.Short() {
		t.Skip("builds binaries")
	}
	forbidden := []string{"net.Dial", "net.(*Dialer)", "net.Listen", "net.(*ListenConfig)", "net/http.", "crypto/tls.", "net.socket", "net.(*sysDialer)"}
	for _, bin := range buildCommands(t, "0", "./cmd/...") {
		syms := symbols(t, bin)
		name := strings.TrimSuffix(filepath.Base(bin), ".exe")
		if linksServerEngine[name] {
			if !strings.Contains(syms, " net.(*Dialer)") {
				t.Errorf("%s links no dialer: is it still linking the PostgreSQL engine?", name)
			}
		} else {
			for _, f := range forbidden {
				if strings.Contains(syms, " "+f) {
					t.Errorf("%s links %s", name, f)
				}
			}
		}
		if why := notStatic(t, bin); len(why) > 0 {
			t.Errorf("%s is not static: %s", filepath.Base(bin), strings.Join(why, "; "))
		}
	}
}

// TestStaticCheckSeesACgoBuild proves the static check is not vacuous: the
// same task-state-guard built with cgo on (the Go default where a C
// compiler is found) links runtime/cgo and the C library, and notStatic
// says so. Linux only: there the net package's resolver is what pulls cgo
// in (the case the README's install guards against); elsewhere (Windows,
// macOS) the net package may need no cgo at all, and a build with cgo on
// could rightly pass. It needs a C
// compiler: without one it skips, except under CI=true, where one is
// expected.
func TestStaticCheckSeesACgoBuild(t *testing.T) {
	platformtest.GoCommand(t)
	if testing.Short() {
		t.Skip("builds binaries")
	}
	if runtime.GOOS != "linux" {
		t.Skip("only Linux builds of the commands link cgo when it is on")
	}
	cc, err := exec.Command("go", "env", "CC").Output()
	if _, lookErr := exec.LookPath(strings.TrimSpace(string(cc))); err != nil || lookErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no C compiler (go env CC): the cgo build cannot be checked")
		}
		t.Skip("no C compiler (go env CC)")
	}
	bins := buildCommands(t, "1", "./cmd/task-state-guard")
	why := notStatic(t, bins[0])
	if len(why) == 0 {
		t.Fatalf("%s built with CGO_ENABLED=1 passes the static check", bins[0])
	}
	t.Logf("cgo build refused: %s", strings.Join(why, "; "))
}
