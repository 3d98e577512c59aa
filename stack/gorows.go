package stack

import (
	"debug/elf"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/cfi"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
)

// goRows are the rows of an amd64 Go binary's code from the runtime's
// pcsp tables, as the Go linker writes them into .debug_frame (which -s
// -w leaves out): CFA = SP + 8 + the stack pointer's delta from the
// function's entry, the return address at CFA-8, the frame pointer not
// described. None for a file of another machine or without a table.
func goRows(ef *elfx.File, a *arch.Arch) []cfi.Row {
	if ef.Machine != elf.EM_X86_64 || !pcln.Has(ef) {
		return nil
	}
	t, err := pcln.Open(ef)
	if err != nil {
		return nil
	}
	spans, err := t.SPDeltas(ef)
	if err != nil || len(spans) == 0 {
		return nil
	}
	rows := make([]cfi.Row, 0, len(spans)+len(spans)/4)
	end := spans[0].Lo
	for _, s := range spans {
		if s.Lo != end {
			rows = append(rows, cfi.Row{PC: end}) // a gap no table covers
		}
		rows = append(rows, cfi.Row{PC: s.Lo, CFA: cfi.CFA{Reg: uint16(a.SPReg), Offset: 8 + s.Delta},
			RA: cfi.Rule{Kind: cfi.Offset, Offset: -8}, FP: cfi.Rule{Kind: cfi.SameValue}, Covered: true})
		end = s.Hi
	}
	return append(rows, cfi.Row{PC: end})
}
