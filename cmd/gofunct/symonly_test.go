package main

import (
	"debug/elf"
	"fmt"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestVerboseSymbolOnly: -V prints a function that only a symbol names
// (an STT_FUNC of .symtab, which debug/elf reads, that no subprogram DIE
// names or links: crt's _start and _init) with what is known, its name and
// its size: `? NAME(?)`, never an invented `void NAME(void)`, and a
// comment saying no debug info describes it. pfunct -V lists only the
// functions the DWARF describes. A function a DIE describes keeps its
// prototype.
func TestVerboseSymbolOnly(t *testing.T) {
	path := testutil.Fixture(t, "c-layouts").Path
	dies := readDIEs(t, path)
	code, out, errs := runGofunct("-V", "--no-cache", path)
	if code != 0 {
		t.Fatalf("gofunct -V: exit %d: %s", code, errs)
	}
	n := 0
	for _, s := range testutil.FuncSymbols(t, path) {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || dies.declared[s.Name] || dies.byLink[s.Name] != "" {
			continue
		}
		n++
		block := fmt.Sprintf("? %s(?);\n/* size: %d, no debug info describes it, only its symbol */\n", s.Name, s.Size)
		if !strings.Contains(out, block) {
			t.Errorf("-V: no block %q:\n%s", block, out)
		}
		if strings.Contains(out, " "+s.Name+"(void);") {
			t.Errorf("-V: %s printed with an invented (void)", s.Name)
		}
	}
	if n < 1 {
		t.Fatalf("no function named only by its symbol in %s: want _start at least", path)
	}
	for name := range dies.withCode {
		if strings.Contains(out, "? "+name+"(?)") {
			t.Errorf("-V: %s has a DIE but printed as ? %s(?)", name, name)
		}
	}
}
