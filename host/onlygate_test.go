package host

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goList runs go list in the module root and returns its output lines.
func goList(t *testing.T, root string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestOnlyTheGateCallsTools type-checks every package of the module and
// fails if anything but the gate calls client.Manager.Call: the gate is the
// one path a tool call may take.
func TestOnlyTheGateCallsTools(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The compiler's export data for every dependency (cached builds), and
	// the files of each of the module's packages as the build selects them.
	exports := map[string]string{}
	for _, line := range goList(t, root, "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "./...") {
		if path, file, ok := strings.Cut(line, " "); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	checked := 0
	for _, line := range goList(t, root, "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \",\"}}", "./...") {
		parts := strings.Split(line, "\t")
		if len(parts) != 3 || parts[2] == "" {
			continue
		}
		pkgPath, dir := parts[0], parts[1]
		if strings.HasSuffix(pkgPath, "/client") {
			continue // the client defines Call
		}
		var files []*ast.File
		for _, name := range strings.Split(parts[2], ",") {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(pkgPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", pkgPath, err)
		}
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
	if checked < 10 {
		t.Fatalf("checked only %d packages", checked)
	}
}
