package ledgercli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// reasonCalls are the constructors whose first string argument is a fixed
// reason shown by TASK_STATE_GUARD_EXPLAIN=1 (see ledger.Reason).
var reasonCalls = map[string]bool{
	"invalidInput": true, "taskNotFound": true, "stateConflict": true, "explained": true,
	"InvalidInput": true, "TaskNotFound": true, "StateConflict": true, // in ledgererr
}

// ledgerSourceDirs are the folders whose sources give reasons: this CLI,
// the ledger and the ledger's internal packages.
var ledgerSourceDirs = []string{
	".",
	filepath.Join("..", "..", "..", "impl", "ledger"),
	filepath.Join("..", "..", "..", "impl", "ledger", "internal", "storageguard"),
	filepath.Join("..", "..", "..", "impl", "ledger", "internal", "ledgererr"),
	filepath.Join("..", "..", "..", "impl", "ledger", "postgres"),
}

// Every reason the ledger or this CLI can give is a string literal, and the
// troubleshooting table (docs/troubleshooting.md) has a row for it. The sources are read
// with go/parser so a new refusal without a row fails here.
func TestEveryReasonHasATroubleshootingRow(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{} // reason -> where
	for _, dir := range ledgerSourceDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go sources in %s: %v", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			collectReasons(t, file, reasons)
		}
	}
	if len(reasons) < 40 {
		t.Fatalf("found only %d reasons: the scan is broken", len(reasons))
	}
	for r, where := range reasons {
		if !strings.Contains(string(page), "| `"+r+"` |") {
			t.Errorf("%s: reason %q has no row in the troubleshooting table (docs/troubleshooting.md)", where, r)
		}
	}
}

func collectReasons(t *testing.T, file string, into map[string]string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		id, ok := call.Fun.(*ast.Ident)
		if !ok || !reasonCalls[id.Name] || len(call.Args) == 0 {
			return true
		}
		lit, ok := call.Args[len(call.Args)-1].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("%s: %s without a literal reason", fset.Position(call.Pos()), id.Name)
			return true
		}
		text, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		into[text] = fset.Position(call.Pos()).String()
		return true
	})
}
