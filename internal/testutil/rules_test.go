package testutil_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestHouseRules checks the module's non-test files (testdata aside)
// against the rules a reader of the code relies on: no file over 700
// lines, no function over 100; recover() only in internal/elfx, the
// boundary that turns debug/elf's panics into errors; and no goroutine
// that defers a WaitGroup's Done: a deferred Done runs while a panic
// unwinds, so Wait returns and the program can go on, or exit 0, before
// the runtime ends it (sync.WaitGroup.Go and par.Each do not).
func TestHouseRules(t *testing.T) {
	const module = "github.com/binscope/binscope"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}} {{join .CgoFiles " "}}`, "./...")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.SplitN(line, "|", 3)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fs[0], module), "/")
		for _, name := range strings.Fields(fs[2]) {
			path := filepath.Join(fs[1], name)
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, e := range houseRules(fset, f, pkg) {
				t.Errorf("%s", e)
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d files checked", checked)
	}
}

// houseRules are f's breaches of TestHouseRules' rules, each with its
// position; pkg is f's package path in the module.
func houseRules(fset *token.FileSet, f *ast.File, pkg string) []string {
	var errs []string
	at := func(n ast.Node) token.Position { return fset.Position(n.Pos()) }
	if n := fset.File(f.Pos()).LineCount(); n > 700 {
		errs = append(errs, fmt.Sprintf("%s: %d lines, over 700: split it by what its parts do", fset.File(f.Pos()).Name(), n))
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			if n := fset.Position(fd.End()).Line - at(fd).Line + 1; n > 100 {
				errs = append(errs, fmt.Sprintf("%s: %s is %d lines, over 100", at(fd), fd.Name.Name, n))
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "recover" && len(n.Args) == 0 && pkg != "internal/elfx" {
				errs = append(errs, fmt.Sprintf("%s: recover() outside internal/elfx: return the error as a value", at(n)))
			}
		case *ast.DeferStmt:
			if deferredDone(n.Call) {
				errs = append(errs, fmt.Sprintf("%s: a deferred Done: use sync.WaitGroup.Go or par.Each, or call Done after the work", at(n)))
			}
		}
		return true
	})
	return errs
}

// deferredDone reports whether a deferred call is X.Done(), directly or as
// a statement of a deferred function literal.
func deferredDone(call *ast.CallExpr) bool {
	isDone := func(c *ast.CallExpr) bool {
		sel, ok := c.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Done" && len(c.Args) == 0
	}
	if isDone(call) {
		return true
	}
	lit, ok := call.Fun.(*ast.FuncLit)
	if !ok {
		return false
	}
	for _, s := range lit.Body.List {
		if es, ok := s.(*ast.ExprStmt); ok {
			if c, ok := es.X.(*ast.CallExpr); ok && isDone(c) {
				return true
			}
		}
	}
	return false
}
