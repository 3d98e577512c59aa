package stack

import (
	"debug/elf"
	"testing"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/cfi"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/internal/testutil"
)

// TestGoRowsMatchLinker: the rows goRows makes from .gopclntab's pcsp
// tables are the Go linker's own .debug_frame (which -s -w leaves out),
// on testdata/cgo-work built by every Go of testutil.GoToolchains, linked
// internally, externally and as PIE: at every address where either
// describes Go code both do, with the same CFA and return address.
func TestGoRowsMatchLinker(t *testing.T) {
	a, err := arch.ForMachine(elf.EM_X86_64)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range testutil.GoToolchains {
		for _, mode := range []string{"internal", "external", "pie"} {
			bin := testutil.BuildCgoWork(t, tc, mode)
			ef, err := elfx.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			linker, err := cfi.Table(ef)
			if err != nil {
				t.Fatal(err)
			}
			ours := goRows(ef, a)
			tab, err := pcln.Open(ef)
			ef.Close()
			if err != nil {
				t.Fatal(err)
			}
			compared, skipped, bad := 0, 0, 0
			check := func(pc uint64, from string) {
				l, lok := cfi.Lookup(linker, pc)
				o, ook := cfi.Lookup(ours, pc)
				switch {
				case from == "pcsp" && !lok: // padding past a function's last instruction
					skipped++
				case from == "linker" && !ook && tab.Lines.PCToFunc(pc) != nil:
					if bad++; bad <= 5 {
						t.Errorf("%s %s: %#x: .debug_frame describes Go code the pcsp rows do not", tc, mode, pc)
					}
				case from == "linker" && !ook: // C code (cgo, the C library's start-up)
					skipped++
				case l.CFA != o.CFA || l.RA != o.RA:
					if bad++; bad <= 5 {
						t.Errorf("%s %s: %#x (a %s row): .debug_frame %v RA %v, pcsp %v RA %v", tc, mode, pc, from, l.CFA, l.RA, o.CFA, o.RA)
					}
				default:
					compared++
				}
			}
			for _, r := range ours {
				if r.Covered {
					check(r.PC, "pcsp")
				}
			}
			for _, r := range linker {
				if r.Covered {
					check(r.PC, "linker")
				}
			}
			t.Logf("%s %s: %d rows agree, %d described by one side only", tc, mode, compared, skipped)
			if compared < 5000 {
				t.Errorf("%s %s: only %d rows compared (%d from pcsp, %d from the linker)", tc, mode, compared, len(ours), len(linker))
			}
		}
	}
}
