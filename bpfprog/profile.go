package probe

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/stack"
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

func (o *ProfileOptions) withDefaults() ProfileOptions {
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

// Stack slots of the profile program, above the unwinder's.
const (
	pKey    = -4  // u32 map key
	pTgid   = -8  // u32 process
	pKStack = -16 // the kernel stack's id
	pRegs   = -24 // pt_regs pointer
	pOne    = -32 // the value 1
)

// unwindMaps are the maps every stack-taking program uses.
func unwindMaps(cs *ebpf.CollectionSpec, rows, stacks int) {
	cs.Maps["unwind_rows"] = &ebpf.MapSpec{Name: "unwind_rows", Type: ebpf.Array, KeySize: 4, ValueSize: stack.RowSize, MaxEntries: uint32(rows)}
	cs.Maps["unwind_procs"] = &ebpf.MapSpec{Name: "unwind_procs", Type: ebpf.Hash, KeySize: 4, ValueSize: stack.ProcValueSize, MaxEntries: 1024}
	cs.Maps["unwind_counts"] = &ebpf.MapSpec{Name: "unwind_counts", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: unwindCounters}
	cs.Maps["stacks"] = &ebpf.MapSpec{Name: "stacks", Type: ebpf.Hash, KeySize: stack.KeySize, ValueSize: 8, MaxEntries: uint32(stacks)}
	cs.Maps["stack_buf"] = &ebpf.MapSpec{Name: "stack_buf", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: stack.KeySize, MaxEntries: 1}
}

// ProfileCollection is the sampling program "profile" (a perf event
// program) and its maps: "kstacks" (kernel stacks by id), "stacks" (a
// count per distinct {process, kernel stack, user stack}) and the unwind
// tables.
func ProfileCollection(a *arch.Arch, o ProfileOptions) (*ebpf.CollectionSpec, error) {
	if a.Name != "x86_64" {
		return nil, arch.ErrUnsupportedArch
	}
	o = o.withDefaults()
	cs := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}, Programs: map[string]*ebpf.ProgramSpec{}}
	unwindMaps(cs, o.RowCapacity, o.Stacks)
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
		asm.JEq.Imm(asm.R0, 0, "out"), // the idle task
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
		in = append(in, lookup("unwind_procs", pTgid, "")...)
		in = append(in, asm.JNE.Imm(asm.R0, 0, "have_proc"))
		in = append(in, descendantCheck(*o.Descendants, "proc_fp", "out", notify)...)
		in = append(in, asm.StoreImm(asm.RFP, pKey, 0, asm.Word).WithSymbol("proc_fp"))
		in = append(in, lookup("unwind_procs", pKey, "out")...)
		in = append(in, asm.Mov.Reg(asm.R7, asm.R0).WithSymbol("have_proc"))
	} else {
		in = append(in, procLookup(pTgid, !o.All, "out")...)
	}
	in = append(in, bufLookup("out")...)
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
	for _, r := range []struct {
		reg  string
		slot int16
	}{{"RIP", uTmp}, {"RSP", uSP}, {"RBP", uFP}} {
		in = append(in,
			storeImm64(asm.RFP, r.slot, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(r.slot)),
			asm.Mov.Imm(asm.R2, 8),
			asm.LoadMem(asm.R3, asm.RFP, pRegs, asm.DWord),
			asm.Add.Imm(asm.R3, int32(a.PtRegs[r.reg])),
			asm.FnProbeReadKernel.Call(),
		)
	}
	in = append(in,
		asm.LoadMem(asm.R8, asm.RFP, uTmp, asm.DWord),
		asm.LoadMem(asm.R9, asm.RFP, uSP, asm.DWord),
	)
	in = append(in, unwindInsns("u", 8)...)
	in = append(in, countStack("out")...)
	in = append(in, asm.Mov.Imm(asm.R0, 0).WithSymbol("out"), asm.Return())
	cs.Programs["profile"] = &ebpf.ProgramSpec{Name: "profile", Type: ebpf.PerfEvent, License: "GPL", Instructions: in}
	return cs, nil
}

// procLookup leaves in R7 the "unwind_procs" value of the process whose
// u32 id is in slot; a process without one jumps to out when only listed
// processes count, else uses the value of process 0 (no modules: frame
// pointers only).
func procLookup(slot int16, listed bool, out string) asm.Instructions {
	if listed {
		return append(lookup("unwind_procs", slot, out), asm.Mov.Reg(asm.R7, asm.R0))
	}
	in := lookup("unwind_procs", slot, "")
	in = append(in, asm.JNE.Imm(asm.R0, 0, "have_proc"), asm.StoreImm(asm.RFP, pKey, 0, asm.Word))
	in = append(in, lookup("unwind_procs", pKey, out)...)
	return append(in, asm.Mov.Reg(asm.R7, asm.R0).WithSymbol("have_proc"))
}

// bufLookup leaves in R6 the per-CPU buffer a stack key is built in.
func bufLookup(out string) asm.Instructions {
	in := asm.Instructions{asm.StoreImm(asm.RFP, pKey, 0, asm.Word)}
	in = append(in, lookup("stack_buf", pKey, out)...)
	return append(in, asm.Mov.Reg(asm.R6, asm.R0))
}

// countStack adds one to the "stacks" count of the key R6 points to.
func countStack(out string) asm.Instructions {
	in := asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("stacks"),
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "stack_new"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Ja.Label(out),
		storeImm64(asm.RFP, pOne, 1).WithSymbol("stack_new"),
		asm.LoadMapPtr(asm.R1, 0).WithReference("stacks"),
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, pOne),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST
		asm.FnMapUpdateElem.Call(),
		asm.JEq.Imm(asm.R0, 0, out),
	}
	return append(in, addCount(UnwindMapFull, 0, "", "stack_full")...)
}
