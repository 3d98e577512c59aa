package line_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestLeaf: the package imports the standard library only, and not
// debug/dwarf, whose LineReader is the tests' oracle.
func TestLeaf(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "./dwarf/line")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if len(imports) < 3 {
		t.Fatalf("imports %q: want the standard library's", imports)
	}
	for _, imp := range imports {
		if strings.Contains(imp, ".") || imp == "debug/dwarf" {
			t.Errorf("dwarf/line imports %s", imp)
		}
	}
}
