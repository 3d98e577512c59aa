package x86

import "golang.org/x/arch/x86/x86asm"

// BranchTarget is the target of a direct (relative) jump or call.
func BranchTarget(a uint64, ins x86asm.Inst) (uint64, bool) {
	if ins.Op != x86asm.CALL && ins.Op != x86asm.JMP && !IsCondJump(ins.Op) {
		return 0, false
	}
	if rel, ok := ins.Args[0].(x86asm.Rel); ok {
		return uint64(int64(a) + int64(ins.Len) + int64(rel)), true
	}
	return 0, false
}

// IsCondJump reports a conditional branch (LOOP and JRCXZ included).
func IsCondJump(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ, x86asm.JE, x86asm.JECXZ, x86asm.JG,
		x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JRCXZ, x86asm.JS, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return true
	}
	return false
}
