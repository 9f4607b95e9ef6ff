package platformtest

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLedgerTestsGiveTheACLAcknowledgement: on Windows opening a ledger
// needs Options.AllowExternalACL (spec/task-state-guard.md 11.3), so a test
// that leaves it out passes on Linux and fails only in the Windows run.
// Every ledger.Options literal in a test file must therefore name the field
// (AllowExternalACL: onWindows, or false in a test of the refusal). Break
// it by deleting the field from one literal: this test names the file.
func TestLedgerTestsGiveTheACLAcknowledgement(t *testing.T) {
	root := moduleRoot(t)
	// Only files that build for Windows can fail there: a linux-only test
	// (the FUSE proofs) needs no acknowledgement.
	windows := build.Default
	windows.GOOS = "windows"
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		if ok, err := windows.MatchFile(filepath.Dir(p), d.Name()); err != nil || !ok {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !buildsForWindows(p) {
			return nil
		}
		inLedger := f.Name.Name == "ledger" && filepath.Base(filepath.Dir(p)) == "ledger" && strings.Contains(filepath.ToSlash(p), "/impl/ledger/")
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isLedgerOptions(lit.Type, inLedger) {
				return true
			}
			checked++
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "AllowExternalACL" {
						return true
					}
				}
			}
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s:%d: ledger Options without AllowExternalACL (add AllowExternalACL: onWindows, or the test fails on Windows)", rel, fset.Position(lit.Pos()).Line)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d ledger Options literals found: the check would be vacuous", checked)
	}
}

// buildsForWindows reports whether the file at p is compiled for
// windows/amd64 (its name and build constraints): a file for Linux or Unix
// only never meets the Windows refusal.
func buildsForWindows(p string) bool {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH = "windows", "amd64"
	ok, err := ctx.MatchFile(filepath.Dir(p), filepath.Base(p))
	return ok || err != nil
}

func isLedgerOptions(typ ast.Expr, inLedger bool) bool {
	switch x := typ.(type) {
	case *ast.Ident:
		return inLedger && x.Name == "Options"
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		return ok && pkg.Name == "ledger" && x.Sel.Name == "Options"
	}
	return false
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
