package depcheck

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/platformtest"
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

// TestRuntimeDependencies fails when cmd/ starts linking a module outside the
// allowed set, or when the project's own runtime packages import a network
// package.
func TestRuntimeDependencies(t *testing.T) {
	platformtest.GoCommand(t)
	deps := runtimeDeps(t)
	if len(deps) == 0 {
		t.Fatal("no dependencies listed: the check would be vacuous")
	}
	var own []string
	for _, p := range deps {
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

// TestBinariesHaveNoSocketCode builds every command and inspects its symbol
// table: no dialer, listener or HTTP client may survive dead-code
// elimination. (modernc.org/sqlite links net/url for its DSN parser and a
// UUID helper that can list interfaces; neither opens a connection.)
func TestBinariesHaveNoSocketCode(t *testing.T) {
	platformtest.GoCommand(t)
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/...")
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(bins) == 0 {
		t.Fatal("no binaries built")
	}
	forbidden := []string{"net.Dial", "net.(*Dialer)", "net.Listen", "net.(*ListenConfig)", "net/http.", "crypto/tls.", "net.socket", "net.(*sysDialer)"}
	for _, bin := range bins {
		out, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		syms := string(out)
		if !strings.Contains(syms, "main.main") {
			t.Fatalf("%s: symbol table looks empty", bin)
		}
		for _, f := range forbidden {
			if strings.Contains(syms, " "+f) {
				t.Errorf("%s links %s", filepath.Base(bin), f)
			}
		}
	}
}
