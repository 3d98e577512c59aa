package dwarf

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestGlobalsAgreeWithSymtab: the variables Globals lists at a static
// address are at the addresses the ELF symbol table gives their symbols;
// Global finds them by name at the same address, and not a variable GCC
// defines at unit level by its declaration in a namespace (no name
// there), nor a name no unit defines.
func TestGlobalsAgreeWithSymtab(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "g.cc")
	code := "namespace ns { int counter = 3; }\nstatic long hidden = 4;\ndouble shared = 5.0;\n" +
		"int main() { return ns::counter + (int)hidden + (int)shared; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "g")
	if out, err := exec.Command("g++", "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		testutil.Skipf(t, "g++: %v %s", err, out)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	sym := map[string]uint64{}
	for _, s := range syms {
		sym[s.Name] = s.Value
	}
	f, err := Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gs, err := f.Globals()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, g := range gs {
		got[g.Name] = g.Addr
	}
	want := map[string]string{"hidden": "_ZL6hidden", "shared": "shared"}
	for name, s := range want {
		if a, ok := got[name]; !ok || a != sym[s] || a == 0 {
			t.Errorf("Globals: %s at %#x (listed: %v), symbol %s at %#x", name, a, ok, s, sym[s])
		}
	}
	main := sym["main"]
	for _, name := range []string{"hidden", "shared"} {
		v, ok, err := f.Global(main, name)
		if err != nil || !ok {
			t.Fatalf("Global(%s): %v, %v", name, ok, err)
		}
		if ps := v.Loc.Pieces; len(ps) != 1 || ps[0].Kind != types.LocAddr || uint64(ps[0].Offset) != sym[want[name]] {
			t.Errorf("Global(%s) = %+v, want the address %#x", name, v.Loc, sym[want[name]])
		}
	}
	for _, name := range []string{"counter", "nosuch"} {
		if v, ok, err := f.Global(main, name); ok || err != nil || v.Name != "" {
			t.Errorf("Global(%s) = %+v, %v, %v; want none", name, v, ok, err)
		}
	}
}
