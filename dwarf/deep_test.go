package dwarf_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestLongTypeChain loads a program whose types chain through 600 pointers
// (s0 points to s1, which points to s2, ...), as C++ services chain their
// classes: the chain is no corrupt nesting. pahole, the oracle, prints
// every struct of it.
func TestLongTypeChain(t *testing.T) {
	const n = 600
	dir := t.TempDir()
	var src strings.Builder
	for i := n - 1; i >= 0; i-- {
		if i == n-1 {
			fmt.Fprintf(&src, "struct s%d { long v; };\n", i)
			continue
		}
		fmt.Fprintf(&src, "struct s%d { struct s%d *next; int v; };\n", i, i+1)
	}
	src.WriteString("struct s0 root;\nint main(void) { return root.v; }\n")
	c := filepath.Join(dir, "chain.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "chain")
	if msg, err := exec.Command("gcc", "-g", "-O0", "-o", bin, c).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, msg)
	}
	spec, err := dwarf.LoadNamed(bin, []string{"s0"}, nil)
	if err != nil {
		t.Fatalf("LoadNamed(s0): %v", err)
	}
	ts, err := spec.Find("s0")
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for s, ok := ts[0].(*types.Struct); ok; depth++ {
		if len(s.Members) == 1 {
			break
		}
		p, _ := s.Members[0].Type.(*types.Pointer)
		if p == nil {
			t.Fatalf("%s: member %s is no pointer", s.Name, s.Members[0].Name)
		}
		s, ok = p.Target.(*types.Struct)
	}
	if depth != n-1 {
		t.Errorf("the chain from s0 ends after %d pointers, want %d", depth, n-1)
	}
	all, err := dwarf.Load(bin, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if _, err := exec.LookPath("pahole"); err != nil {
		testutil.Skipf(t, "pahole: %v", err)
	}
	out, err := exec.Command("pahole", bin).Output()
	if err != nil {
		t.Fatalf("pahole: %v", err)
	}
	want := strings.Count(string(out), "\nstruct s") + strings.Count(string(out)[:min(7, len(out))], "struct ")
	got := 0
	for _, ty := range all.Types() {
		if s, ok := ty.(*types.Struct); ok && strings.HasPrefix(s.Name, "s") {
			got++
		}
	}
	if want != n || got != want {
		t.Errorf("structs: ours %d, pahole's %d, want %d", got, want, n)
	}
}
