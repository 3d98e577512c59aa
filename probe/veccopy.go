package probe

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// vectorCopy is the general register that holds, at pc, the low size
// bytes of vector register name (X0..X15) an integer is in: every
// instruction that may last write the vector register before pc copies
// that general register into it (movq %rdi,%xmm1; movd %esi,%xmm1 for
// 4 bytes or fewer), and no path from it to pc writes the general
// register (gcc -O3 seed 3433: fn11's b, which the debug info gives as
// XMM1 for an unrolled loop's copies, where R14 it came from still holds
// it). why says why none does.
func (r *Resolver) vectorCopy(pc uint64, name string, size int64) (gpr, why string) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "X"))
	if !strings.HasPrefix(name, "X") || err != nil || n < 0 || n > 15 || r.arch.SP != "RSP" {
		return "", ""
	}
	none := fmt.Sprintf("; no general register holds a copy of it at %#x", pc)
	fl := r.flows.at(pc)
	if fl == nil {
		return "", none
	}
	xreg := x86asm.X0 + x86asm.Reg(n)
	defs, ok := r.facts.reachingWrites(fl, pc, xreg)
	if !ok || len(defs) == 0 {
		return "", none
	}
	fam := -1
	for _, d := range defs {
		in := fl.op[d]
		src, isReg := in.Args[1].(x86asm.Reg)
		f := x86.Family(src)
		switch {
		case !isReg || in.Args[0] != xreg || f < 0 || fam >= 0 && f != fam:
			return "", none
		case in.Op == x86asm.MOVQ && src >= x86asm.RAX && src <= x86asm.R15:
		case in.Op == x86asm.MOVD && src >= x86asm.EAX && src <= x86asm.R15L && size <= 4:
		default:
			return "", none
		}
		fam = f
		for y := range fl.between(pc, d, fl.pred) {
			if x86.Writes(r.arch, fl.op[y], false)&(1<<f) != 0 {
				return "", fmt.Sprintf("; %s, which %#x copied into it, is written again before %#x", x86.GPRs[f], d, pc)
			}
		}
	}
	return x86.GPRs[fam], ""
}

// intLike reports whether t is read as an integer (or a pointer): not a
// floating-point value.
func intLike(t types.Type) bool {
	switch b := types.Resolve(t).(type) {
	case *types.Base:
		return b.Encoding != types.Float && b.Encoding != types.Complex && b.ByteSize <= 8
	case *types.Pointer:
		return true
	}
	return false
}
