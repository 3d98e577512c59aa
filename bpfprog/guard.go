package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/bpfasm"
	"github.com/binscope/binscope/spec"
)

// guardInsns jumps to skip when the site's pass is the one that branches
// to morestack (see Guard); the context is in R6. Without a guard it is
// empty.
func guardInsns(a *arch.Arch, g *spec.Guard, skip string) (asm.Instructions, error) {
	if g == nil {
		return nil, nil
	}
	if g.Flags {
		// The branch's condition on the flags the CMP left (x86's JBE:
		// the carry or the zero flag).
		off, ok := a.PtRegs[a.Flags]
		if !ok || a.BelowEq == 0 || a.BelowEq > 1<<31-1 {
			return nil, fmt.Errorf("guard: %s has no flags register in pt_regs that says below-or-equal", a.Name)
		}
		return asm.Instructions{
			asm.LoadMem(asm.R1, rCtx, off, asm.DWord),
			asm.And.Imm(asm.R1, int32(a.BelowEq)),
			asm.JNE.Imm(asm.R1, 0, skip),
		}, nil
	}
	gOff, ok := a.PtRegs[g.G]
	sp, ok2 := a.PtRegs[a.SP]
	if !ok || !ok2 || g.SPSub < 0 || g.SPSub > 1<<31-1 || g.Off < -1<<31 || g.Off > 1<<31-1 {
		return nil, fmt.Errorf("guard: cannot compare %s+%d with the stack pointer", g.G, g.Off)
	}
	// The guard's value cannot be read (not a goroutine after all): the
	// pass goes on, as without a guard.
	read := skip + "_read"
	in := asm.Instructions{
		asm.LoadMem(asm.R1, rCtx, gOff, asm.DWord),
		bpfasm.StoreImm64(asm.RFP, slotTmp, 0),
	}
	in = append(in, readUser(g.Off, 8, asm.RFP, slotTmp, read)...)
	return append(in,
		asm.LoadMem(asm.R2, asm.RFP, slotTmp, asm.DWord),
		asm.LoadMem(asm.R1, rCtx, sp, asm.DWord),
		asm.JLT.Imm(asm.R1, int32(g.SPSub), skip),
		asm.Sub.Imm(asm.R1, int32(g.SPSub)),
		asm.JLE.Reg(asm.R1, asm.R2, skip),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(read),
	), nil
}

// guarded is guardInsns followed by the return of the pass it skips; the
// program goes on after it.
func guarded(a *arch.Arch, g *spec.Guard, label string) (asm.Instructions, error) {
	in, err := guardInsns(a, g, label)
	if err != nil || len(in) == 0 {
		return in, err
	}
	return append(in,
		asm.Ja.Label(label+"_on"),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(label),
		asm.Return(),
		asm.Mov.Reg(rCtx, rCtx).WithSymbol(label+"_on"),
	), nil
}
