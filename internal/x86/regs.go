package x86

import (
	"github.com/binscope/binscope/internal/arch"
	"golang.org/x/arch/x86/x86asm"
)

// GPRs names the x86-64 general registers in their encoding order, the
// order of the bits of a RegSet.
var GPRs = [16]string{"RAX", "RCX", "RDX", "RBX", "RSP", "RBP", "RSI", "RDI", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"}

// RegSet is a set of general registers, bit i for GPRs[i].
type RegSet uint16

const AllRegs RegSet = 0xffff

// RegBit is the register a pt_regs name denotes, as a set.
func RegBit(name string) RegSet {
	for i, g := range GPRs {
		if g == name {
			return 1 << i
		}
	}
	return 0
}

// Family is the 64-bit register an x86asm register is part of (AL, AH,
// AX, EAX are RAX), or -1.
func Family(r x86asm.Reg) int {
	switch {
	case r >= x86asm.AL && r <= x86asm.BL:
		return int(r - x86asm.AL)
	case r >= x86asm.AH && r <= x86asm.BH:
		return int(r - x86asm.AH)
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return int(r-x86asm.SPB) + 4
	case r >= x86asm.AX && r <= x86asm.R15W:
		return int(r - x86asm.AX)
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return int(r - x86asm.EAX)
	case r >= x86asm.RAX && r <= x86asm.R15:
		return int(r - x86asm.RAX)
	}
	return -1
}

// CallClobbers are the registers a call may change: the C ABI's
// caller-saved registers, or, in Go code (every register is caller-saved
// in Go's internal ABI but the stack pointer, the frame pointer and the
// goroutine), all the others.
func CallClobbers(a *arch.Arch, goCode bool) RegSet {
	if goCode {
		return AllRegs &^ RegBit(a.SP) &^ RegBit(a.FP) &^ RegBit(a.GoG)
	}
	var s RegSet
	for _, r := range a.CallerSaved {
		s |= RegBit(r)
	}
	return s
}

// implicit are the registers instructions write besides their first
// operand (string operations with a REP prefix also count down RCX).
var implicit = map[x86asm.Op][]string{
	x86asm.MUL: {"RAX", "RDX"}, x86asm.DIV: {"RAX", "RDX"}, x86asm.IDIV: {"RAX", "RDX"},
	x86asm.CWD: {"RDX"}, x86asm.CDQ: {"RDX"}, x86asm.CQO: {"RDX"},
	x86asm.CBW: {"RAX"}, x86asm.CWDE: {"RAX"}, x86asm.CDQE: {"RAX"}, x86asm.LAHF: {"RAX"}, x86asm.XLATB: {"RAX"},
	x86asm.CPUID: {"RAX", "RBX", "RCX", "RDX"}, x86asm.RDTSC: {"RAX", "RDX"}, x86asm.RDTSCP: {"RAX", "RCX", "RDX"},
	x86asm.RDPMC: {"RAX", "RDX"}, x86asm.XGETBV: {"RAX", "RDX"}, x86asm.RDMSR: {"RAX", "RDX"},
	x86asm.SYSCALL: {"RAX", "RCX", "R11"}, x86asm.SYSENTER: {"RAX", "RCX", "RDX", "R11"},
	x86asm.CMPXCHG: {"RAX"}, x86asm.CMPXCHG8B: {"RAX", "RDX"}, x86asm.CMPXCHG16B: {"RAX", "RDX"},
	x86asm.LODSB: {"RAX", "RSI", "RCX"}, x86asm.LODSW: {"RAX", "RSI", "RCX"}, x86asm.LODSD: {"RAX", "RSI", "RCX"}, x86asm.LODSQ: {"RAX", "RSI", "RCX"},
	x86asm.STOSB: {"RDI", "RCX"}, x86asm.STOSW: {"RDI", "RCX"}, x86asm.STOSD: {"RDI", "RCX"}, x86asm.STOSQ: {"RDI", "RCX"},
	x86asm.MOVSB: {"RSI", "RDI", "RCX"}, x86asm.MOVSW: {"RSI", "RDI", "RCX"}, x86asm.MOVSD: {"RSI", "RDI", "RCX"}, x86asm.MOVSQ: {"RSI", "RDI", "RCX"},
	x86asm.SCASB: {"RDI", "RCX"}, x86asm.SCASW: {"RDI", "RCX"}, x86asm.SCASD: {"RDI", "RCX"}, x86asm.SCASQ: {"RDI", "RCX"},
	x86asm.CMPSB: {"RSI", "RDI", "RCX"}, x86asm.CMPSW: {"RSI", "RDI", "RCX"}, x86asm.CMPSD: {"RSI", "RDI", "RCX"}, x86asm.CMPSQ: {"RSI", "RDI", "RCX"},
	x86asm.INSB: {"RDI", "RCX"}, x86asm.INSW: {"RDI", "RCX"}, x86asm.INSD: {"RDI", "RCX"},
	x86asm.OUTSB: {"RSI", "RCX"}, x86asm.OUTSW: {"RSI", "RCX"}, x86asm.OUTSD: {"RSI", "RCX"},
	x86asm.IN: {"RAX"}, x86asm.LOOP: {"RCX"}, x86asm.LOOPE: {"RCX"}, x86asm.LOOPNE: {"RCX"},
	x86asm.PUSH: {"RSP"}, x86asm.POP: {"RSP"}, x86asm.PUSHF: {"RSP"}, x86asm.PUSHFQ: {"RSP"}, x86asm.POPF: {"RSP"},
	x86asm.POPFQ: {"RSP"}, x86asm.RET: {"RSP"}, x86asm.LEAVE: {"RSP", "RBP"}, x86asm.ENTER: {"RSP", "RBP"},
}

// readOnly are instructions whose first operand, a register, is only
// read.
var readOnly = map[x86asm.Op]bool{
	x86asm.CMP: true, x86asm.TEST: true, x86asm.BT: true, x86asm.PUSH: true, x86asm.JMP: true, x86asm.CALL: true,
	x86asm.NOP: true, x86asm.PREFETCHT0: true, x86asm.PREFETCHT1: true, x86asm.PREFETCHT2: true, x86asm.PREFETCHNTA: true,
	x86asm.UCOMISS: true, x86asm.UCOMISD: true, x86asm.COMISS: true, x86asm.COMISD: true, x86asm.PTEST: true,
}

// Writes is the set of general registers in may change: its first
// operand when that is a register it writes, both operands of an exchange,
// and the registers the instruction changes implicitly (a call: those the
// callee may change). Instructions decoded as unknown change all of them.
func Writes(a *arch.Arch, in x86asm.Inst, goCode bool) RegSet {
	if in.Op == 0 {
		return AllRegs
	}
	var s RegSet
	if in.Op == x86asm.CALL {
		s |= CallClobbers(a, goCode) | RegBit(a.SP)
	}
	if IsCondJump(in.Op) {
		return s | implicitSet(in.Op)
	}
	for i, a := range in.Args {
		r, ok := a.(x86asm.Reg)
		if !ok {
			continue
		}
		f := Family(r)
		if f < 0 {
			continue
		}
		switch {
		case i == 0 && !readOnly[in.Op]:
			s |= 1 << f
		case i == 1 && (in.Op == x86asm.XCHG || in.Op == x86asm.XADD || in.Op == x86asm.MULX):
			s |= 1 << f
		}
	}
	if in.Op == x86asm.IMUL && in.Args[1] == nil { // the one-operand form
		s |= RegBit("RAX") | RegBit("RDX")
	}
	return s | implicitSet(in.Op)
}

func implicitSet(op x86asm.Op) RegSet {
	var s RegSet
	for _, r := range implicit[op] {
		s |= RegBit(r)
	}
	return s
}
