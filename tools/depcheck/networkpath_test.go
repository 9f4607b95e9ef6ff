package depcheck

import (
	"encoding/json"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// serverEngine is the one package through which the runtime may reach
// network code: the PostgreSQL engine. A file ledger never calls into it
// (TestFileLedgerOpensNoSocket shows it at the system call level).
const serverEngine = ownModule + "/impl/ledger/postgres"

// networkCode are the packages (a trailing slash: every package under
// the prefix) that connect, dial or speak TLS.
var networkCode = []string{"net", "net/http", "net/http/", "net/rpc", "net/smtp", "crypto/tls", "github.com/jackc/"}

// netWithoutDialing are the packages outside the server engine that may
// import package net itself, and why that opens nothing: each reads
// addresses or interfaces and never dials.
var netWithoutDialing = map[string]string{
	"github.com/google/uuid": "modernc.org/sqlite's UUID helper lists the interfaces for a node id",
	"crypto/x509":            "certificates name IP addresses (reached only beside TLS)",
}

func isNetworkCode(p string) bool {
	for _, n := range networkCode {
		if p == n || (strings.HasSuffix(n, "/") && strings.HasPrefix(p, n)) {
			return true
		}
	}
	return false
}

// importGraph is every package cmd/ links, with its imports.
func importGraph(t *testing.T) (roots []string, imports map[string][]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Name", "./cmd/...")
	cmd.Dir = moduleRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports = map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath, Name string
			Imports          []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		imports[p.ImportPath] = p.Imports
		if p.Name == "main" && strings.HasPrefix(p.ImportPath, ownModule+"/cmd/") {
			roots = append(roots, p.ImportPath)
		}
	}
	return roots, imports
}

// reach walks from roots, never entering avoid, and returns for each
// package reached the package that first imported it.
func reach(roots []string, imports map[string][]string, avoid string) map[string]string {
	from := map[string]string{}
	queue := append([]string(nil), roots...)
	for _, r := range roots {
		from[r] = ""
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range imports[p] {
			if _, seen := from[imp]; seen || imp == avoid {
				continue
			}
			from[imp] = p
			queue = append(queue, imp)
		}
	}
	return from
}

func chain(from map[string]string, p string) string {
	var path []string
	for ; p != ""; p = from[p] {
		path = append([]string{p}, path...)
	}
	return strings.Join(path, " -> ")
}

// TestNetworkOnlyThroughTheServerEngine: the programs under cmd/ reach the
// network code (package net's dialers, crypto/tls, the driver) only
// through impl/ledger/postgres: walked from every main without entering
// that package, no network package is reached, and package net only
// through the importers named in netWithoutDialing. Walked through it,
// they are reached, so the check is not vacuous.
func TestNetworkOnlyThroughTheServerEngine(t *testing.T) {
	platformtest.GoCommand(t)
	roots, imports := importGraph(t)
	if len(roots) == 0 {
		t.Fatal("no main package under cmd/")
	}
	if _, ok := imports[serverEngine]; !ok {
		t.Fatalf("cmd/ does not link %s: nothing to check", serverEngine)
	}
	without := reach(roots, imports, serverEngine)
	var bad []string
	for p := range without {
		if !isNetworkCode(p) {
			continue
		}
		if p == "net" {
			var why []string
			for q := range without {
				for _, imp := range imports[q] {
					if imp == "net" {
						if _, ok := netWithoutDialing[q]; !ok {
							why = append(why, q)
						}
					}
				}
			}
			sort.Strings(why)
			for _, q := range why {
				bad = append(bad, "net, imported by "+q+": "+chain(without, q))
			}
			continue
		}
		bad = append(bad, chain(without, p))
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("network code reached without the server engine: %s", b)
	}
	through := reach(roots, imports, "")
	for _, p := range []string{"crypto/tls", "github.com/jackc/pgx/v5/pgconn", "net"} {
		if _, ok := through[p]; !ok {
			t.Errorf("%s is not reached even through the server engine: the walk is broken", p)
		}
	}
}
