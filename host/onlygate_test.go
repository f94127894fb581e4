package host

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTheGateCallsTools type-checks every package of the module and
// fails if anything but the gate calls client.Manager.Call: the gate is the
// one path a tool call may take.
func TestOnlyTheGateCallsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module from source")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	checked := 0
	for dir := range dirs {
		if filepath.Base(dir) == "client" {
			continue // the client defines Call
		}
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			var files []*ast.File
			for _, f := range pkg.Files {
				files = append(files, f)
			}
			info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
			conf := types.Config{Importer: imp, Error: func(error) {}}
			_, _ = conf.Check(pkg.Name, fset, files, info)
			checked++
			for sel, s := range info.Selections {
				fn, ok := s.Obj().(*types.Func)
				if !ok || fn.Name() != "Call" || fn.Pkg() == nil || !strings.HasSuffix(fn.Pkg().Path(), "/client") {
					continue
				}
				pos := fset.Position(sel.Pos())
				if rel, _ := filepath.Rel(root, pos.Filename); rel != filepath.Join("host", "gate.go") {
					t.Errorf("%s:%d calls client.Manager.Call directly; every tool call must go through the gate", rel, pos.Line)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d packages", checked)
	}
}
