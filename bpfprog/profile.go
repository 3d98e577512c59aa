package bpfprog

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/unwind"
)

// ProfileOptions tune a CPU profile. A nil *ProfileOptions means the
// defaults.
type ProfileOptions struct {
	// Hz is the sampling frequency per CPU (default 99).
	Hz int
	// All profiles every process; otherwise only the processes added to
	// the session (AddProcess) are sampled.
	All bool
	// RowCapacity sizes the unwind table (rows); the session's stack.Tables
	// must fit.
	RowCapacity int
	// Stacks bounds the distinct stacks counted (default 16384).
	Stacks int
	// Descendants, when not nil, also samples the descendants of the
	// process named with SetRoot (a command's children), reporting each
	// new one on the "new_procs" ring buffer for its tables; until they
	// come it unwinds by frame pointer. The offsets are the kernel's.
	Descendants *TaskOffsets
}

// WithDefaults is o (nil: the defaults) with every unset field at its
// default.
func (o *ProfileOptions) WithDefaults() ProfileOptions {
	var r ProfileOptions
	if o != nil {
		r = *o
	}
	if r.Hz <= 0 {
		r.Hz = 99
	}
	if r.Stacks <= 0 {
		r.Stacks = 1 << 14
	}
	if r.RowCapacity <= 0 {
		r.RowCapacity = 1 << 16
	}
	return r
}

// Stack slots of the profile program, above the unwinder's (which also
// uses -4 and -32: see package unwind); the site programs' processTable
// keeps the process in pTgid too.
const (
	pTgid   = -8  // u32 process
	pKStack = -16 // the kernel stack's id
	pRegs   = -24 // pt_regs pointer
)

// ProfileCollection is the sampling program "profile" (a perf event
// program) and its maps: "kstacks" (kernel stacks by id), "stacks" (a
// count per distinct {process, kernel stack, user stack}) and the unwind
// tables.
func ProfileCollection(a *arch.Arch, o ProfileOptions) (*ebpf.CollectionSpec, error) {
	if err := unwind.CheckArch(a); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	cs := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}, Programs: map[string]*ebpf.ProgramSpec{}}
	unwind.UnwindMaps(cs, o.RowCapacity, o.Stacks)
	cs.Maps["kstacks"] = &ebpf.MapSpec{Name: "kstacks", Type: ebpf.StackTrace, KeySize: 4, ValueSize: 8 * 127, MaxEntries: uint32(o.Stacks)}
	in := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		// The kernel stack, when the sample interrupted the kernel.
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, 0).WithReference("kstacks"),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnGetStackid.Call(),
		asm.StoreMem(asm.RFP, pKStack, asm.R0, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, pTgid, asm.R0, asm.Word),
		asm.JEq.Imm(asm.R0, 0, unwind.Pass("u")), // the idle task: on past the unwinder to out
	}
	if o.Descendants != nil && !o.All {
		descendantMaps(cs)
		cs.Maps["new_procs"] = &ebpf.MapSpec{Name: "new_procs", Type: ebpf.RingBuf, MaxEntries: 1 << 12}
		// A process found to descend: say so once, then use the frame
		// pointer until its tables are in.
		notify := asm.Instructions{
			asm.LoadMapPtr(asm.R1, 0).WithReference("new_procs"),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, dTgid),
			asm.Mov.Imm(asm.R3, 4),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnRingbufOutput.Call(),
		}
		in = append(in, unwind.ProcTable(pTgid, false, unwind.Pass("u"), func(fallback string) asm.Instructions {
			return descendantCheck(*o.Descendants, fallback, unwind.Pass("u"), notify)
		})...)
	} else {
		in = append(in, unwind.ProcTable(pTgid, !o.All, unwind.Pass("u"), nil)...)
	}
	in = append(in, unwind.KeyBuffer(unwind.Pass("u"))...)
	in = append(in,
		asm.LoadMem(asm.R1, asm.RFP, pTgid, asm.Word),
		asm.StoreMem(asm.R6, 0, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.RFP, pKStack, asm.DWord),
		asm.StoreMem(asm.R6, 4, asm.R1, asm.Word),
		// The user registers: the task's, wherever the sample landed.
		asm.FnGetCurrentTaskBtf.Call(),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.FnTaskPtRegs.Call(),
		asm.StoreMem(asm.RFP, pRegs, asm.R0, asm.DWord),
	)
	in = append(in, unwind.TaskRegs(a, pRegs)...)
	in = append(in, unwind.Unwind("u", 8, "out", unwind.Depth)...)
	in = append(in, unwind.CountStack("out")...)
	in = append(in, asm.Mov.Imm(asm.R0, 0).WithSymbol("out"), asm.Return())
	cs.Programs["profile"] = &ebpf.ProgramSpec{Name: "profile", Type: ebpf.PerfEvent, License: "GPL", Instructions: in}
	return cs, nil
}
