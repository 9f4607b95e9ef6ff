package ledger

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// An InternalError's explanation (Reason: "<operation> failed") names
// the operation with a fixed word, never an input: every operation name
// handed to internal or classifySQLite, or to a function that passes its
// op parameter on, is a string literal or that parameter itself. A create
// with a given task id whose clock fails shows it: the answer is
// InternalError "read clock failed", without the id.
func TestInternalReasonsNameTheOperationOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	takesOp := map[string]int{"internal": 0, "classifySQLite": 0}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			i := 0
			for _, field := range fn.Type.Params.List {
				for _, name := range field.Names {
					if name.Name == "op" {
						takesOp[fn.Name.Name] = i
					}
					i++
				}
				if len(field.Names) == 0 {
					i++
				}
			}
		}
	}
	calls := 0
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				name = fun.Name
			case *ast.SelectorExpr:
				name = fun.Sel.Name
			}
			at, ok := takesOp[name]
			if !ok || at >= len(call.Args) {
				return true
			}
			calls++
			switch arg := call.Args[at].(type) {
			case *ast.BasicLit:
				if arg.Kind == token.STRING {
					return true
				}
			case *ast.Ident:
				if arg.Name == "op" {
					return true
				}
			}
			t.Errorf("%s: %s's operation is neither a literal nor the caller's op", fset.Position(call.Pos()), name)
			return true
		})
	}
	if calls < 30 {
		t.Fatalf("found only %d calls naming an operation: the scan is broken", calls)
	}

	l, clk, _ := openTest(t)
	secret := "5ec2e7aa-0000-4000-8000-00000000beef"
	clk.now = math.NaN()
	_, err = l.Create(CreateParams{TaskID: secret})
	if classOf(err) != "InternalError" || Reason(err) != "read clock failed" {
		t.Fatalf("create on a failing clock: %v (reason %q), want InternalError, read clock failed", err, Reason(err))
	}
	if strings.Contains(err.Error(), "beef") {
		t.Fatalf("the error %q holds the id", err)
	}
}

// classOf is the class the command line prints for err.
func classOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrInvalidInput):
		return "InvalidInput"
	case errors.Is(err, ErrTaskNotFound):
		return "TaskNotFound"
	case errors.Is(err, ErrStateConflict):
		return "StateConflict"
	}
	return "InternalError"
}
