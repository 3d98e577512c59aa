package testutil_test

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// oracleHarness are the packages that hand debug/dwarf to the tests as
// their oracle: the project's DIE reader is package dwarf's own.
var oracleHarness = map[string]bool{"internal/dwarftest": true, "internal/testutil": true, "internal/gen": true}

// TestDebugDWARFInTestsOnly: no file of the module but a test's, or one of
// the test harnesses', imports debug/dwarf, and no command links a
// harness: debug/dwarf is the tests' oracle only (debug/elf links it, for
// its File.DWARF, which nothing of the commands calls).
func TestDebugDWARFInTestsOnly(t *testing.T) {
	const module = "github.com/binscope/binscope"
	root := testutil.Root(t)
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}} {{join .CgoFiles " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.SplitN(line, "|", 3)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fs[0], module), "/")
		for _, name := range strings.Fields(fs[2]) {
			path := filepath.Join(fs[1], name)
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == "debug/dwarf" && !oracleHarness[pkg] {
					t.Errorf("%s imports debug/dwarf: use package dwarf's names and reader (debug/dwarf is the tests' oracle)", path)
				}
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d files checked", checked)
	}
	t.Logf("%d non-test files checked", checked)
	cmd = exec.Command("go", "list", "-deps", "./cmd/gopahole", "./cmd/gofunct", "./cmd/goprobe")
	cmd.Dir = root
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("only %d packages linked", len(deps))
	}
	for _, dep := range deps {
		if oracleHarness[strings.TrimPrefix(dep, module+"/")] { // debug/elf itself imports debug/dwarf
			t.Errorf("a command links %s", dep)
		}
	}
}
