// Package bpfasm holds the few BPF instruction sequences that both the
// probe programs (package bpfprog) and the stack unwinder (package stack)
// emit with cilium/ebpf's asm: a map lookup keyed by a stack slot, and
// the double-word immediate store asm does not offer.
package bpfasm

import "github.com/cilium/ebpf/asm"

// Lookup leaves in R0 map m's value for the key in stack slot key (an
// offset from R10), or jumps to miss when there is none (miss "": goes on
// with R0 = 0). It clobbers R1 to R5.
func Lookup(m string, key int16, miss string) asm.Instructions {
	in := asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference(m),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupElem.Call(),
	}
	if miss != "" {
		in = append(in, asm.JEq.Imm(asm.R0, 0, miss))
	}
	return in
}

// StoreImm64 is *(u64 *)(dst + off) = v (sign-extended), the BPF_ST
// double word store that asm.StoreImm does not emit.
func StoreImm64(dst asm.Register, off int16, v int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(v)}
}
