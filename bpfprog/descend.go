package bpfprog

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/internal/bpfasm"
)

// TaskOffsets are where struct task_struct keeps a task's parent and its
// process id, in bytes, from the running kernel's BTF.
type TaskOffsets struct {
	RealParent, Tgid int32
}

// descendMaxDepth bounds the walk up a process's ancestors.
const descendMaxDepth = 16

// DescendantFilter makes every program of cs return at once unless
// the current process is the one in "desc_root" or descends from it: a
// command's probes on a library see the command and its children, not
// every process using the library. Until the root is set (the command is
// not started yet) nothing passes. Verdicts are kept per process in
// "desc_seen".
//
// only, when not nil, picks the programs that get the check.
func DescendantFilter(cs *ebpf.CollectionSpec, off TaskOffsets, only func(*ebpf.ProgramSpec) bool) {
	descendantMaps(cs)
	for _, p := range cs.Programs {
		if only != nil && !only(p) {
			continue
		}
		p.Instructions = prepend(descendantPrologue(off), p.Instructions)
	}
}

// prepend puts pro before the program's instructions. The program's own
// label moves to pro's first instruction, and so do the BTF function and
// the first source line of a compiled program (the kernel wants them at
// the program's first instruction).
func prepend(pro, in asm.Instructions) asm.Instructions {
	first := in[0]
	if sym := first.Symbol(); sym != "" {
		pro[0] = pro[0].WithSymbol(sym)
		first = first.WithSymbol("")
	}
	if fn := btf.FuncMetadata(&first); fn != nil {
		pro[0] = btf.WithFuncMetadata(pro[0], fn)
		first = btf.WithFuncMetadata(first, nil)
	}
	if src := first.Source(); src != nil {
		pro[0] = pro[0].WithSource(src)
	}
	in[0] = first
	return append(pro, in...)
}

// Stack slots of the check: in a site program it runs before the
// program's own code; in the profile program, the slots are free.
const (
	dTgid = -8 // the current process, a u32
	dKey  = -4
	dTmp  = -40
)

// descendantPrologue passes to the program (R1 the context again) when
// the current process is the root or descends from it, else returns.
func descendantPrologue(off TaskOffsets) asm.Instructions {
	const pass, drop = "desc_pass", "desc_drop"
	in := asm.Instructions{
		asm.Mov.Reg(asm.R9, asm.R1), // the context, for the program
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, dTgid, asm.R0, asm.Word),
	}
	in = append(in, descendantCheck(off, pass, drop, nil)...)
	return append(in,
		asm.Mov.Imm(asm.R0, 0).WithSymbol(drop),
		asm.Return(),
		asm.Mov.Reg(asm.R1, asm.R9).WithSymbol(pass),
	)
}

// descendantCheck jumps to pass when the process in slot dTgid is the one
// in "desc_root" or descends from it, else to drop. first, when not nil,
// runs once per process found to descend (before pass), when its verdict
// is new. It uses R0 to R8.
func descendantCheck(off TaskOffsets, pass, drop string, first asm.Instructions) asm.Instructions {
	const yes, no, walk = "desc_yes", "desc_no", "desc_walk"
	in := asm.Instructions{asm.StoreImm(asm.RFP, dKey, 0, asm.Word)}
	in = append(in, bpfasm.Lookup("desc_root", dKey, drop)...)
	in = append(in,
		asm.LoadMem(asm.R6, asm.R0, 0, asm.Word), // the root
		asm.JEq.Imm(asm.R6, 0, drop),             // no command yet
		asm.LoadMem(asm.R1, asm.RFP, dTgid, asm.Word),
		asm.JEq.Reg(asm.R1, asm.R6, pass),
	)
	in = append(in, bpfasm.Lookup("desc_seen", dTgid, "")...)
	in = append(in,
		asm.JEq.Imm(asm.R0, 0, walk),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JEq.Imm(asm.R1, 1, pass),
		asm.Ja.Label(drop),
		asm.FnGetCurrentTask.Call().WithSymbol(walk),
		asm.Mov.Reg(asm.R7, asm.R0),
	)
	read := func(ptrOff int32, size int32) asm.Instructions {
		return asm.Instructions{
			bpfasm.StoreImm64(asm.RFP, dTmp, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, dTmp),
			asm.Mov.Imm(asm.R2, size),
			asm.Mov.Reg(asm.R3, asm.R7),
			asm.Add.Imm(asm.R3, ptrOff),
			asm.FnProbeReadKernel.Call(),
		}
	}
	for i := 0; i < descendMaxDepth; i++ {
		in = append(in, read(off.RealParent, 8)...)
		in = append(in,
			asm.LoadMem(asm.R7, asm.RFP, dTmp, asm.DWord),
			asm.JEq.Imm(asm.R7, 0, no),
		)
		in = append(in, read(off.Tgid, 4)...)
		in = append(in,
			asm.LoadMem(asm.R1, asm.RFP, dTmp, asm.Word),
			asm.JEq.Reg(asm.R1, asm.R6, yes),
			asm.JLE.Imm(asm.R1, 1, no), // init: no further
		)
	}
	verdict := func(label string, v int64) asm.Instructions {
		return append(asm.Instructions{asm.StoreImm(asm.RFP, dTmp, v, asm.Word).WithSymbol(label)},
			update("desc_seen", dTgid, dTmp)...)
	}
	in = append(in, asm.Ja.Label(no))
	in = append(in, verdict(yes, 1)...)
	in = append(in, first...)
	in = append(in, asm.Ja.Label(pass))
	in = append(in, verdict(no, 0)...)
	return append(in, asm.Ja.Label(drop))
}

// descendantMaps are the maps the check reads.
func descendantMaps(cs *ebpf.CollectionSpec) {
	cs.Maps["desc_root"] = &ebpf.MapSpec{Name: "desc_root", Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
	cs.Maps["desc_seen"] = &ebpf.MapSpec{Name: "desc_seen", Type: ebpf.LRUHash, KeySize: 4, ValueSize: 4, MaxEntries: 1 << 12}
}
