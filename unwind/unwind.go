// Package unwind is the BPF unwinder that walks a user stack in the
// kernel: its code, maps and counters, the row format of the tables it
// reads (Row: package stack compiles them from each file's call frame
// information), and the key of a counted stack as the programs write it
// (Key).
package unwind

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/bpfasm"
)

// User stacks are unwound inside the BPF program, as a debugger would, from
// tables compiled at attach time out of each mapped file's call frame
// information (.eh_frame, .debug_frame): code built without frame pointers
// unwinds as well as code with them, and no raw stack memory leaves the
// process. Only the return addresses reach user space, where the model
// names them.
//
// The unwinder is a bounded loop over the frames, each frame straight-line
// code unrolled per search step, with no branch but the exits: the
// verifier walks it once per frame, whatever the tables hold. Where no table covers an address (a JIT, a file without
// CFI) it follows the frame pointer.

// The unwinder is BPF code that the programs of package bpfprog include:
// UnwindMaps adds its maps to a collection; in a program, CtxRegs or
// TaskRegs load the registers a stack starts from, ProcTable finds the
// process's modules, and Unwind walks the frames into a key that
// KeyBuffer provides and CountStack counts, or into an event's record.
// Its code keeps what it needs in the stack slots from -72 down to
// SlotsEnd, and in -4 (a map key) and -32 (a new count's value); a
// program that includes it keeps nothing there across it.

// CheckArch says whether the unwinder follows a's stacks: it is written
// for x86-64's calls, which push the return address (the CFA is 8 above
// it), and its PLT entries.
func CheckArch(a *arch.Arch) error {
	if a.Name != "x86_64" {
		return fmt.Errorf("stacks: %w: %s (the unwinder is for x86_64)", arch.ErrUnsupportedArch, a.Name)
	}
	return nil
}

// searchSteps is the binary search's length: tables of up to 2^22 rows
// per file.
const searchSteps = 22

// Stack slots of the unwinder, below the probe programs' own.
const (
	uFP     = -72  // the frame pointer of the frame being unwound
	uPC     = -80  // the address looked up, in the file
	uBase   = -88  // binary search: first candidate row
	uN      = -96  // binary search: candidates left
	uHalf   = -104 // binary search: half of them
	uKey    = -112 // u32 map key
	uTmp    = -120 // what bpf_probe_read_user read
	uLoHi   = -128 // the module's rows, first | end << 32
	uBias   = -136 // the module's bias
	uCFA    = -144 // the CFA computed
	uFlags  = -152 // the row's flags
	uFPOff  = -160 // the row's frame pointer offset
	uSP     = -168 // the stack pointer of the frame being unwound
	uMisses = -176 // frames unwound by frame pointer for want of a table
	// SlotsEnd is the lowest stack slot the unwinder uses.
	SlotsEnd = uMisses
	uKey32   = -4  // u32 map key of the process and key buffer lookups
	uOne     = -32 // the value 1, a new stack's count
)

// The unwinder's counters, in the "unwind_counts" array.
const (
	UnwindStacks        = iota // stacks unwound
	UnwindTruncated            // stacks longer than the unwinder's depth
	UnwindFailed               // a table lookup that failed (tables being replaced)
	UnwindNoTable              // frames in code no table covers, unwound by frame pointer
	UnwindMapFull              // stacks the counting map had no room for
	UnwindNoTableStacks        // stacks with a frame in code no table covers
	UnwindCounters             // the number of counters
)

// Unwind unwinds the user stack into the depth (at most Depth) u64 slots at
// R6+ipsOff, zeroing the slots it does not fill. On entry R7 points to the
// process's "unwind_procs" value, R8 holds the instruction pointer, R9 the
// stack pointer and the slot uFP the frame pointer. It ends at label
// prefix+"_end" with R6 and R7 intact (R9 is its frame counter).
//
// The frames are a bounded loop (the kernel verifies such loops since
// 5.3): one frame's code, about 900 instructions, whatever the depth.
// Code before it that jumps past it to label pass (a caller's exit after
// the unwinder) jumps to Pass(prefix) instead; pass "" when nothing does.
func Unwind(prefix string, ipsOff int16, pass string, depth int) asm.Instructions {
	done, fail, end := prefix+"_done", prefix+"_fail", prefix+"_end"
	loop, full := prefix+"_loop", prefix+"_full"
	var in asm.Instructions
	for k := 0; k < depth; k++ {
		in = append(in, bpfasm.StoreImm64(asm.R6, ipsOff+int16(8*k), 0))
	}
	in = append(in,
		bpfasm.StoreImm64(asm.RFP, uMisses, 0),
		asm.StoreMem(asm.RFP, uSP, asm.R9, asm.DWord),
		asm.Mov.Imm(asm.R9, 0), // the frame
		// Frame R9: its address to ips[R9]; none (0) ends the stack.
		asm.JGE.Imm(asm.R9, int32(depth), full).WithSymbol(loop),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.LSh.Imm(asm.R1, 3),
		asm.Add.Reg(asm.R1, asm.R6),
		asm.StoreMem(asm.R1, ipsOff, asm.R8, asm.DWord),
		asm.JEq.Imm(asm.R8, 0, done),
		// Past the first frame, a return address: the call is the
		// instruction before it (the last of its function, when the
		// callee does not return). nz = (k | -k) >> 63.
		asm.Mov.Imm(asm.R2, 0),
		asm.Sub.Reg(asm.R2, asm.R9),
		asm.Or.Reg(asm.R2, asm.R9),
		asm.RSh.Imm(asm.R2, 63),
		asm.Mov.Reg(asm.R1, asm.R8),
		asm.Sub.Reg(asm.R1, asm.R2),
	)
	in = append(in, findModule()...)
	in = append(in, search(fail)...)
	in = append(in, step()...)
	in = append(in,
		asm.Add.Imm(asm.R9, 1),
		asm.Ja.Label(loop),
		// Depth frames taken: a caller left is a truncated stack.
		asm.JEq.Imm(asm.R8, 0, done).WithSymbol(full),
	)
	in = append(in, addCount(UnwindTruncated, 0, "", prefix+"_c1")...)
	in = append(in, asm.Ja.Label(done))
	if pass != "" {
		in = append(in, asm.Ja.Label(pass).WithSymbol(Pass(prefix)))
	}
	in = append(in, addCount(UnwindFailed, 0, fail, prefix+"_c2")...)
	in = append(in, asm.Mov.Imm(asm.R0, 0).WithSymbol(done))
	in = append(in, addCount(UnwindNoTable, uMisses, "", prefix+"_c3")...)
	in = append(in,
		asm.LoadMem(asm.R1, asm.RFP, uMisses, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, prefix+"_c5"),
	)
	in = append(in, addCount(UnwindNoTableStacks, 0, "", prefix+"_c5")...)
	in = append(in, addCount(UnwindStacks, 0, "", prefix+"_c4")...)
	in = append(in, asm.Mov.Imm(asm.R0, 0).WithSymbol(end))
	return in
}

// Pass is the label code before Unwind(prefix, ...) jumps to for that
// call's pass label.
func Pass(prefix string) string { return prefix + "_s0" }

// findModule picks, without branches, the module of R7's table that holds
// the address in R1 (the address itself stays in R1): its bias goes to
// uBias and its rows to uLoHi. No module: bias 0 and rows [0, 1), the
// frame-pointer row, and uMisses counts one.
func findModule() asm.Instructions {
	in := asm.Instructions{
		bpfasm.StoreImm64(asm.RFP, uLoHi, 0),
		bpfasm.StoreImm64(asm.RFP, uBias, 0),
	}
	for m := int16(0); m < MaxModules; m++ {
		o := m * ModuleSize
		in = append(in,
			asm.LoadMem(asm.R2, asm.R7, o, asm.DWord),   // start
			asm.LoadMem(asm.R3, asm.R7, o+8, asm.DWord), // end
			asm.Mov.Reg(asm.R4, asm.R1),
			asm.Sub.Reg(asm.R4, asm.R2), // d = addr - start
			asm.Sub.Reg(asm.R3, asm.R2), // len = end - start
			asm.Mov.Reg(asm.R5, asm.R4),
			asm.Sub.Reg(asm.R5, asm.R3), // d - len: negative when d < len
			asm.Xor.Imm(asm.R4, -1),     // ~d: negative when addr >= start
			asm.And.Reg(asm.R5, asm.R4),
			asm.ArSh.Imm(asm.R5, 63), // all ones when start <= addr < end
		)
		// Only the module holding the address adds its bias and rows.
		for _, f := range []struct{ field, slot int16 }{{o + 16, uBias}, {o + 24, uLoHi}} {
			in = append(in,
				asm.LoadMem(asm.R2, asm.R7, f.field, asm.DWord),
				asm.And.Reg(asm.R2, asm.R5),
				asm.LoadMem(asm.R0, asm.RFP, f.slot, asm.DWord),
				asm.Or.Reg(asm.R0, asm.R2),
				asm.StoreMem(asm.RFP, f.slot, asm.R0, asm.DWord),
			)
		}
	}
	// No module: rows [0, 1) and one more frame without a table.
	// nz = (x | -x) >> 63 is 1 when x != 0 (x < 2^63).
	in = append(in,
		asm.LoadMem(asm.R2, asm.RFP, uLoHi, asm.DWord),
		asm.Mov.Imm(asm.R3, 0),
		asm.Sub.Reg(asm.R3, asm.R2),
		asm.Or.Reg(asm.R3, asm.R2),
		asm.RSh.Imm(asm.R3, 63),
		asm.Xor.Imm(asm.R3, 1), // 1: no module
		asm.LoadMem(asm.R4, asm.RFP, uMisses, asm.DWord),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.StoreMem(asm.RFP, uMisses, asm.R4, asm.DWord),
		asm.LSh.Imm(asm.R3, 32),
		asm.Or.Reg(asm.R2, asm.R3),
		// The search: pc = addr - bias over [lo, hi).
		asm.LoadMem(asm.R3, asm.RFP, uBias, asm.DWord),
		asm.Mov.Reg(asm.R4, asm.R1),
		asm.Sub.Reg(asm.R4, asm.R3),
		asm.StoreMem(asm.RFP, uPC, asm.R4, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R2),
		asm.LSh.Imm(asm.R3, 32),
		asm.RSh.Imm(asm.R3, 32), // lo
		asm.StoreMem(asm.RFP, uBase, asm.R3, asm.DWord),
		asm.RSh.Imm(asm.R2, 32), // hi
		asm.Sub.Reg(asm.R2, asm.R3),
		asm.StoreMem(asm.RFP, uN, asm.R2, asm.DWord),
	)
	return in
}

// search finds the last row at or before uPC in [uBase, uBase+uN) and
// leaves a pointer to it in R0: searchSteps halvings without branches,
// each keeping the upper half when its first row is at or before uPC.
func search(fail string) asm.Instructions {
	var in asm.Instructions
	for s := 0; s < searchSteps; s++ {
		in = append(in,
			asm.LoadMem(asm.R1, asm.RFP, uN, asm.DWord),
			asm.Mov.Reg(asm.R2, asm.R1),
			asm.RSh.Imm(asm.R2, 1), // half
			asm.Sub.Reg(asm.R1, asm.R2),
			asm.StoreMem(asm.RFP, uN, asm.R1, asm.DWord),
			asm.StoreMem(asm.RFP, uHalf, asm.R2, asm.DWord),
			asm.LoadMem(asm.R3, asm.RFP, uBase, asm.DWord),
			asm.Add.Reg(asm.R3, asm.R2), // mid
			asm.StoreMem(asm.RFP, uKey, asm.R3, asm.Word),
		)
		in = append(in, bpfasm.Lookup("unwind_rows", uKey, fail)...)
		in = append(in,
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R2, asm.RFP, uPC, asm.DWord),
			asm.Sub.Reg(asm.R2, asm.R1),
			asm.ArSh.Imm(asm.R2, 63),
			asm.Xor.Imm(asm.R2, -1), // all ones when row pc <= pc
			asm.LoadMem(asm.R3, asm.RFP, uHalf, asm.DWord),
			asm.And.Reg(asm.R3, asm.R2),
			asm.LoadMem(asm.R4, asm.RFP, uBase, asm.DWord),
			asm.Add.Reg(asm.R4, asm.R3),
			asm.StoreMem(asm.RFP, uBase, asm.R4, asm.DWord),
		)
	}
	in = append(in,
		asm.LoadMem(asm.R3, asm.RFP, uBase, asm.DWord),
		asm.StoreMem(asm.RFP, uKey, asm.R3, asm.Word),
	)
	return append(in, bpfasm.Lookup("unwind_rows", uKey, fail)...)
}

// step applies the row R0 points to: the caller's stack pointer is the
// CFA, its instruction pointer the return address at CFA - 8, its frame
// pointer the one saved at CFA + fp or this frame's.
func step() asm.Instructions {
	neg := func(r asm.Register) asm.Instruction { return asm.Neg.Imm(r, 0) }
	read := func(addr asm.Register) asm.Instructions { // R3 = address; uTmp = *(u64 *)R3 or 0
		return asm.Instructions{
			asm.Mov.Reg(asm.R3, addr),
			bpfasm.StoreImm64(asm.RFP, uTmp, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, uTmp),
			asm.Mov.Imm(asm.R2, 8),
			asm.FnProbeReadUser.Call(),
		}
	}
	in := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R0, 8, asm.Word),
		asm.LSh.Imm(asm.R2, 32),
		asm.ArSh.Imm(asm.R2, 32), // cfa offset
		asm.LoadMem(asm.R3, asm.R0, 12, asm.Half),
		asm.LSh.Imm(asm.R3, 48),
		asm.ArSh.Imm(asm.R3, 48), // fp offset
		asm.StoreMem(asm.RFP, uFPOff, asm.R3, asm.DWord),
		asm.LoadMem(asm.R4, asm.R0, 14, asm.Byte),
		asm.StoreMem(asm.RFP, uFlags, asm.R4, asm.DWord),
		// base = FP + ((SP - FP) & -(flags & FlagCFASP))
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.And.Imm(asm.R5, FlagCFASP),
		neg(asm.R5),
		asm.LoadMem(asm.R1, asm.RFP, uFP, asm.DWord),
		asm.LoadMem(asm.R0, asm.RFP, uSP, asm.DWord),
		asm.Sub.Reg(asm.R0, asm.R1),
		asm.And.Reg(asm.R0, asm.R5),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.Add.Reg(asm.R0, asm.R2), // CFA
		// A PLT entry: 8 more once past its push, at offset 11 of 16:
		// ((ip & 15) + 5) >> 4 is 1 from there on.
		asm.Mov.Reg(asm.R1, asm.R8),
		asm.And.Imm(asm.R1, 15),
		asm.Add.Imm(asm.R1, 5),
		asm.RSh.Imm(asm.R1, 4),
		asm.LSh.Imm(asm.R1, 3),
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.RSh.Imm(asm.R5, 2),
		asm.And.Imm(asm.R5, 1),
		neg(asm.R5),
		asm.And.Reg(asm.R1, asm.R5),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.RFP, uCFA, asm.R0, asm.DWord),
		asm.Sub.Imm(asm.R0, 8),
	}
	in = append(in, read(asm.R0)...)
	in = append(in, asm.LoadMem(asm.R8, asm.RFP, uTmp, asm.DWord)) // the return address
	in = append(in,
		asm.LoadMem(asm.R0, asm.RFP, uCFA, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, uFPOff, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R1),
	)
	in = append(in, read(asm.R0)...)
	in = append(in,
		// FP = FP + ((saved - FP) & -((flags >> 1) & 1))
		asm.LoadMem(asm.R1, asm.RFP, uTmp, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, uFP, asm.DWord),
		asm.Sub.Reg(asm.R1, asm.R2),
		asm.LoadMem(asm.R4, asm.RFP, uFlags, asm.DWord),
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.RSh.Imm(asm.R5, 1),
		asm.And.Imm(asm.R5, 1),
		neg(asm.R5),
		asm.And.Reg(asm.R1, asm.R5),
		asm.Add.Reg(asm.R2, asm.R1),
		asm.StoreMem(asm.RFP, uFP, asm.R2, asm.DWord),
		// No caller (FlagStop): IP = 0.
		asm.RSh.Imm(asm.R4, 3),
		asm.And.Imm(asm.R4, 1),
		asm.Sub.Imm(asm.R4, 1), // 0 to stop, all ones to go on
		asm.And.Reg(asm.R8, asm.R4),
		// Stacks grow down: a CFA at or below SP is garbage, stop.
		asm.LoadMem(asm.R0, asm.RFP, uCFA, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, uSP, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Sub.Reg(asm.R2, asm.R1),
		asm.Sub.Imm(asm.R2, 1),
		asm.ArSh.Imm(asm.R2, 63),
		asm.Xor.Imm(asm.R2, -1),
		asm.And.Reg(asm.R8, asm.R2),
		asm.StoreMem(asm.RFP, uSP, asm.R0, asm.DWord),
	)
	return in
}

// addCount adds one (slot 0) or a stack slot's value to counter i of
// "unwind_counts"; its first instruction carries sym, its end label skip.
func addCount(i int, slot int16, sym, skip string) asm.Instructions {
	var in asm.Instructions
	if slot != 0 {
		in = append(in,
			asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord),
			asm.StoreMem(asm.RFP, uTmp, asm.R1, asm.DWord),
		)
	}
	in = append(in, asm.StoreImm(asm.RFP, uKey, int64(i), asm.Word))
	in = append(in, bpfasm.Lookup("unwind_counts", uKey, skip)...)
	in = append(in, asm.Mov.Imm(asm.R1, 1))
	if slot != 0 {
		in[len(in)-1] = asm.LoadMem(asm.R1, asm.RFP, uTmp, asm.DWord)
	}
	in = append(in,
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(skip),
	)
	if sym != "" {
		in[0] = in[0].WithSymbol(sym)
	}
	return in
}

// UnwindMaps adds the maps of a program that takes stacks to cs: the
// rows of the unwind tables (rows of them), the processes' modules, the
// counters, and the distinct stacks counted (up to stacks of them) with
// the per-CPU buffer their keys are built in.
func UnwindMaps(cs *ebpf.CollectionSpec, rows, stacks int) {
	cs.Maps["unwind_rows"] = &ebpf.MapSpec{Name: "unwind_rows", Type: ebpf.Array, KeySize: 4, ValueSize: RowSize, MaxEntries: uint32(rows)}
	cs.Maps["unwind_procs"] = &ebpf.MapSpec{Name: "unwind_procs", Type: ebpf.Hash, KeySize: 4, ValueSize: ProcValueSize, MaxEntries: 1024}
	cs.Maps["unwind_counts"] = &ebpf.MapSpec{Name: "unwind_counts", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: UnwindCounters}
	cs.Maps["stacks"] = &ebpf.MapSpec{Name: "stacks", Type: ebpf.Hash, KeySize: KeySize, ValueSize: 8, MaxEntries: uint32(stacks)}
	cs.Maps["stack_buf"] = &ebpf.MapSpec{Name: "stack_buf", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: KeySize, MaxEntries: 1}
}

// CtxRegs loads the unwinder's inputs from the pt_regs that ctx points
// to (a uprobe's context): the instruction pointer into R8, the stack
// pointer into R9, the frame pointer into its slot.
func CtxRegs(a *arch.Arch, ctx asm.Register) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R8, ctx, a.PtRegs[a.PC], asm.DWord),
		asm.LoadMem(asm.R9, ctx, a.PtRegs[a.SP], asm.DWord),
		asm.LoadMem(asm.R1, ctx, a.PtRegs[a.FP], asm.DWord),
		asm.StoreMem(asm.RFP, uFP, asm.R1, asm.DWord),
	}
}

// TaskRegs loads the unwinder's inputs, as CtxRegs does, from the
// kernel's pt_regs of the current task, whose address is in stack slot
// regs (a perf event's sample may land in the kernel: the task's user
// registers are what its user stack starts from).
func TaskRegs(a *arch.Arch, regs int16) asm.Instructions {
	var in asm.Instructions
	for _, r := range []struct {
		reg  string
		slot int16
	}{{a.PC, uTmp}, {a.SP, uSP}, {a.FP, uFP}} {
		in = append(in,
			bpfasm.StoreImm64(asm.RFP, r.slot, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(r.slot)),
			asm.Mov.Imm(asm.R2, 8),
			asm.LoadMem(asm.R3, asm.RFP, regs, asm.DWord),
			asm.Add.Imm(asm.R3, int32(a.PtRegs[r.reg])),
			asm.FnProbeReadKernel.Call(),
		)
	}
	return append(in,
		asm.LoadMem(asm.R8, asm.RFP, uTmp, asm.DWord),
		asm.LoadMem(asm.R9, asm.RFP, uSP, asm.DWord),
	)
}

// ProcTable leaves in R7 the "unwind_procs" value of the process whose
// u32 id is in stack slot, the modules Unwind reads. A process without
// one jumps to out when listed; otherwise miss, when not nil, runs first
// (it may jump to out, or on to the label it is given) and the process
// unwinds with process 0's value (no modules: frame pointers only).
func ProcTable(slot int16, listed bool, out string, miss func(fallback string) asm.Instructions) asm.Instructions {
	if listed {
		return append(bpfasm.Lookup("unwind_procs", slot, out), asm.Mov.Reg(asm.R7, asm.R0))
	}
	in := bpfasm.Lookup("unwind_procs", slot, "")
	in = append(in, asm.JNE.Imm(asm.R0, 0, "have_proc"))
	fallback := asm.StoreImm(asm.RFP, uKey32, 0, asm.Word)
	if miss != nil {
		in = append(in, miss("proc_fp")...)
		fallback = fallback.WithSymbol("proc_fp")
	}
	in = append(in, fallback)
	in = append(in, bpfasm.Lookup("unwind_procs", uKey32, out)...)
	return append(in, asm.Mov.Reg(asm.R7, asm.R0).WithSymbol("have_proc"))
}

// KeyBuffer leaves in R6 the per-CPU buffer a stack's key is built in:
// u32 process, s32 aux, then Unwind's addresses at offset 8 (see KeySize).
func KeyBuffer(out string) asm.Instructions {
	in := asm.Instructions{asm.StoreImm(asm.RFP, uKey32, 0, asm.Word)}
	in = append(in, bpfasm.Lookup("stack_buf", uKey32, out)...)
	return append(in, asm.Mov.Reg(asm.R6, asm.R0))
}

// CountStack adds one to the "stacks" count of the key R6 points to, and
// goes on at out.
func CountStack(out string) asm.Instructions {
	in := asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("stacks"),
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "stack_new"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Ja.Label(out),
		bpfasm.StoreImm64(asm.RFP, uOne, 1).WithSymbol("stack_new"),
		asm.LoadMapPtr(asm.R1, 0).WithReference("stacks"),
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, uOne),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST
		asm.FnMapUpdateElem.Call(),
		asm.JEq.Imm(asm.R0, 0, out),
	}
	return append(in, addCount(UnwindMapFull, 0, "", "stack_full")...)
}
