package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/bpfasm"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/unwind"
)

// addMarks adds the "marks" map when a site of s has a mark.
func addMarks(cs *ebpf.CollectionSpec, s *spec.Spec) {
	for _, p := range s.Probes {
		for _, site := range p.Sites {
			if site.Mark != nil {
				cs.Maps["marks"] = &ebpf.MapSpec{Name: "marks", Type: ebpf.LRUHash, KeySize: 24, ValueSize: 8, MaxEntries: spec.MarkMapEntries}
				return
			}
		}
	}
}

// slotMark is the mark's key on the program's stack: the thread, the CFA,
// the group (24 bytes), below the unwinder's slots. It is used only by the
// mark's instructions, which run before any argument is read, so the
// expression stack (from exprTop down) may reuse it afterwards.
const slotMark = unwind.SlotsEnd - 24

// markKey stores the mark's key of the site's frame.
func markKey(a *arch.Arch, m *spec.Mark) (asm.Instructions, error) {
	in := asm.Instructions{
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, slotMark, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R1, 0),
	}
	if m.CFAReg != "" {
		off, ok := a.PtRegs[m.CFAReg]
		if !ok || m.CFAOff < -1<<31 || m.CFAOff > 1<<31-1 {
			return nil, fmt.Errorf("mark: the CFA %s%+d is not in pt_regs", m.CFAReg, m.CFAOff)
		}
		in = append(in, asm.LoadMem(asm.R1, rCtx, off, asm.DWord), asm.Add.Imm(asm.R1, int32(m.CFAOff)))
	}
	return append(in,
		asm.StoreMem(asm.RFP, slotMark+8, asm.R1, asm.DWord),
		bpfasm.StoreImm64(asm.RFP, slotMark+16, int32(m.Group)),
	), nil
}

// markInsns returns from the program when the site's call was counted
// already (see Mark), and marks it otherwise; with Clear, the mark goes
// either way. The context is in R6; the program goes on after them.
func markInsns(a *arch.Arch, m *spec.Mark, label string) (asm.Instructions, error) {
	if m == nil || !m.Start {
		return nil, nil
	}
	in, err := markKey(a, m)
	if err != nil {
		return nil, err
	}
	in = append(in, bpfasm.Lookup("marks", slotMark, "")...)
	if m.Clear {
		in = append(in, asm.JEq.Imm(asm.R0, 0, label+"_count"))
		in = append(in, unmark()...)
		in = append(in, asm.Ja.Label(label+"_seen"))
	} else {
		in = append(in,
			asm.JNE.Imm(asm.R0, 0, label+"_seen"),
			bpfasm.StoreImm64(asm.RFP, slotTmp, 1),
		)
		in = append(in, update("marks", slotMark, slotTmp)...)
		in = append(in, asm.Ja.Label(label+"_count"))
	}
	return append(in,
		asm.Mov.Imm(asm.R0, 0).WithSymbol(label+"_seen"),
		asm.Return(),
		asm.Mov.Reg(rCtx, rCtx).WithSymbol(label+"_count"),
	), nil
}

// update sets map m's value for the key in stack slot key to the value in
// stack slot val.
func update(m string, key, val int16) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference(m),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, int32(val)),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
	}
}

// unmark deletes the mark whose key is in slotMark.
func unmark() asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("marks"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, slotMark),
		asm.FnMapDeleteElem.Call(),
	}
}

// clearProgram is a clear site's program: the call is over, its mark goes.
func clearProgram(a *arch.Arch, m *spec.Mark) (asm.Instructions, error) {
	if m == nil {
		return nil, fmt.Errorf("a clear site without a mark")
	}
	in := asm.Instructions{asm.Mov.Reg(rCtx, asm.R1)}
	k, err := markKey(a, m)
	if err != nil {
		return nil, err
	}
	in = append(in, k...)
	in = append(in, unmark()...)
	return append(in, asm.Mov.Imm(asm.R0, 0), asm.Return()), nil
}
