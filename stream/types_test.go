package stream

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The types a Go user touches are declared in this package, not aliased from
// another, so `go doc stream.Options` shows their fields and methods: no
// exported name of the package is a type alias, and each of these is a type
// declared here.
func TestPublicTypesDeclaredHere(t *testing.T) {
	want := []string{"Options", "WriteOptions", "Info", "DocSource", "DenseSource", "TextSource",
		"Docs", "Dense", "Texts", "Progress", "Warner", "Error", "DocWriter", "DenseWriter",
		"MemoryDocs", "MemoryDense", "Format", "File", "FileSystem", "SpillOptions", "SpillSource", "Closer"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if !ts.Name.IsExported() {
					continue
				}
				if ts.Assign.IsValid() {
					t.Errorf("%s: type %s is an alias; go doc would show none of its fields or methods", fset.Position(ts.Pos()), ts.Name.Name)
					continue
				}
				declared[ts.Name.Name] = true
			}
		}
	}
	for _, n := range want {
		if !declared[n] {
			t.Errorf("type %s is not declared in package stream", n)
		}
	}
}
