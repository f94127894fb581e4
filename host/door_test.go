package host

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
)

// TestOneDoor: the gate's steps are written once. Asking a person,
// granting, and writing an intent or an outcome record happen only in the
// door (pass, and execute, which it calls), whatever the operation — a tool
// call, a read, a prompts/get, a subscription — so no operation can take a
// road of its own past them; only the door and what explains a decision
// without running anything decide; only a tool call's execution sends
// through the catalog.
func TestOneDoor(t *testing.T) {
	door := []string{"pass", "execute"}
	allowed := map[string][]string{
		"intent": door, "record": door, "grant": door, "Ask": door,
		"decide": append([]string{"Explain", "explainOperation"}, door...),
		"Call":   {"callTool"},
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Recv == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				step, where := sel.Sel.Name, recvPath(sel.X)
				switch {
				case where == "g" && slices.Contains([]string{"intent", "record", "grant", "decide"}, step),
					(where == "g.o.Asker" || asksOf(sel.X)) && step == "Ask", where == "g.o.Catalog" && step == "Call":
				default:
					return true
				}
				seen[step] = true
				if !slices.Contains(allowed[step], fn.Name.Name) {
					t.Errorf("%s: %s calls %s.%s: only %v may; every operation passes the door (pass)", fset.Position(call.Pos()), fn.Name.Name, where, step, allowed[step])
				}
				return true
			})
		}
	}
	for step := range allowed {
		if !seen[step] {
			t.Errorf("no call of %s found: the test no longer sees the door's steps", step)
		}
	}
}

// asksOf reports whether e is g.askerOf(...): who is asked about a call,
// its own asker or the gate's.
func asksOf(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "askerOf" && recvPath(sel.X) == "g"
}

// recvPath spells a selector's receiver expression (g, g.o.Asker), "" for any
// other shape.
func recvPath(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if s := recvPath(x.X); s != "" {
			return s + "." + x.Sel.Name
		}
	}
	return ""
}

// TestOutcomeStatusNamesEveryOutcome: each way an execution can end is the
// status of the same name in the gate's results and in the audit log.
func TestOutcomeStatusNamesEveryOutcome(t *testing.T) {
	for _, o := range []client.Outcome{client.OutcomeSuccess, client.OutcomeToolError, client.OutcomeNotSent,
		client.OutcomeRejected, client.OutcomeThrottled, client.OutcomeUnknown} {
		if got := outcomeStatus(o); string(got) != string(o) {
			t.Errorf("outcomeStatus(%q) = %q, want the status of the same name", o, got)
		}
	}
}
