package sweepcli

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every reason a CORRUPT answer can carry (and SWEEP_STATE_EXPLAIN=1
// prints) is a string literal in the engine or the parser, and the troubleshooting page's
// "Why CORRUPT" table has a row for it. The sources are read with go/parser
// so that a new refusal without a row fails here.
func TestEveryCorruptReasonHasARow(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{} // reason -> where
	scan := func(dir string, take func(*ast.CallExpr) (ast.Expr, bool)) {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go sources in %s: %v", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			fset := gotoken.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				arg, ok := take(call)
				if !ok {
					return true
				}
				if inner, isCall := arg.(*ast.CallExpr); isCall {
					if id, isID := inner.Fun.(*ast.Ident); isID && id.Name == "parseReason" {
						return true // the parser's reasons, scanned below
					}
				}
				lit, ok := arg.(*ast.BasicLit)
				if !ok || lit.Kind != gotoken.STRING {
					t.Errorf("%s: a CORRUPT reason that is not a literal", fset.Position(call.Pos()))
					return true
				}
				text, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				reasons[strings.TrimPrefix(text, "%w: ")] = fset.Position(call.Pos()).String()
				return true
			})
		}
	}
	named := func(name string) func(*ast.CallExpr) (ast.Expr, bool) {
		return func(c *ast.CallExpr) (ast.Expr, bool) {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == name && len(c.Args) > 0 {
				return c.Args[len(c.Args)-1], true
			}
			return nil, false
		}
	}
	// The engine's own reasons, and parseReason's fallback.
	scan(filepath.Join("..", "..", "engine", "sweepcore"), named("corrupt"))
	reasons["the state file is outside the YAML subset"] = "parseReason"
	// The parser's: corruptf(line, "...") and fmt.Errorf("%w: ...", ErrCorrupt).
	parse := filepath.Join("..", "..", "codec", "yamlsubset")
	scan(parse, named("corruptf"))
	scan(parse, func(c *ast.CallExpr) (ast.Expr, bool) {
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Errorf" || len(c.Args) != 2 {
			return nil, false
		}
		if id, ok := c.Args[1].(*ast.Ident); !ok || id.Name != "ErrCorrupt" {
			return nil, false
		}
		return c.Args[0], true
	})
	if len(reasons) < 15 {
		t.Fatalf("found only %d reasons: the scan is broken", len(reasons))
	}
	for r, where := range reasons {
		if !strings.Contains(string(page), "| `"+r+"` |") {
			t.Errorf("%s: CORRUPT reason %q has no row in docs/troubleshooting.md's \"why CORRUPT\" table", where, r)
		}
	}
}
