package sweepstate

import (
	"bytes"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// internalNames are the module's internal packages a reader of this
// package's documentation cannot import: neither the docs nor the
// exported declarations may send the reader to one.
var internalNames = regexp.MustCompile(`\binternal/|\b(yamlsubset|pyjson|isotime|outtext|durable|walfile|sweeprules|sweepcore|sweepfast|sweepcli|argparse|testsupport)\b`)

// TestGoDocNamesNoInternalPackage: what `go doc` shows of this package
// (the package comment, and each exported name's comment and declaration,
// unexported fields left out as go doc leaves them) names no internal
// package, in prose or in a type.
func TestGoDocNamesNoInternalPackage(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(".", name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/stateguard/stateguard/impl/sweepstate")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, text string) {
		if m := internalNames.FindString(text); m != "" {
			t.Errorf("%s names the internal package %q:\n%s", what, m, text)
		}
	}
	decl := func(node any) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, node); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	check("the package comment", pkg.Doc)
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			check(strings.Join(v.Names, ", "), v.Doc+decl(v.Decl))
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			check(f.Name, f.Doc+decl(f.Decl))
		}
	}
	values(pkg.Consts)
	values(pkg.Vars)
	funcs(pkg.Funcs)
	for _, typ := range pkg.Types {
		check(typ.Name, typ.Doc+decl(typ.Decl))
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
	}
}
