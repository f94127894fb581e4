package serve

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// contextKeys are the only keys serve may put in or read from a context,
// and why each is not an input of the call: neither carries an asker or an
// answer, which reach the gate as parameters (host.Call.Asker,
// host.Asking).
var contextKeys = map[string]bool{
	// Which of the two go-sdk HTTP handlers served the request: routing,
	// set before the SDK makes the session (http.go).
	"statelessKey": true,
	// The parked call a server's request arose in: the manager answers a
	// server's input-required result with its call's context (park.go).
	"parkKey": true,
}

// TestNoAskerTravelsInAContext: serve's code puts no value in a context,
// and reads none from one, under a key other than contextKeys, so the
// asker of a call and the answer that came with it cannot go back to
// travelling through the context (a gate that found no asker there would
// refuse the call, and one that found another request's would ask the
// wrong client).
func TestNoAskerTravelsInAContext(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			var key ast.Expr
			switch {
			case sel.Sel.Name == "WithValue" && isIdent(sel.X, "context") && len(call.Args) == 3:
				key = call.Args[1]
			case sel.Sel.Name == "Value" && len(call.Args) == 1 && !isIdent(sel.X, "context"):
				key = call.Args[0]
			default:
				return true
			}
			seen++
			lit, _ := key.(*ast.CompositeLit)
			var typ string
			if lit != nil {
				if id, ok := lit.Type.(*ast.Ident); ok {
					typ = id.Name
				}
			}
			if !contextKeys[typ] {
				t.Errorf("%s: a context value under %s: pass it as a parameter (an asker or an answer goes to the gate with the call: host.Call.Asker, host.Asking)",
					fset.Position(call.Pos()), types(key))
			}
			return true
		})
	}
	if seen == 0 {
		t.Fatal("found no context value at all: the scan looks at nothing")
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// types names the key expression for the error.
func types(e ast.Expr) string {
	if lit, ok := e.(*ast.CompositeLit); ok {
		if id, ok := lit.Type.(*ast.Ident); ok {
			return id.Name + "{}"
		}
	}
	return "a key that is not a plain key type"
}
