package probe

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// opOnOldCopy checks an expression of one register, one operation and a
// constant (R ^ k, R << k, R + k) of the value name at addr against the
// code before addr. It is stale when the last write of the register
// before addr moved another variable there (see lastMove: the debug info
// puts it in the register after the write, and the code computes the
// value from nothing the write left), and the code applies the
// expression's operation and constant to a copy of the register made
// before that write, which nothing writes from the copy to the write:
// the expression was made for what the register held before, and the
// code computed the value from it in another register. GCC's variable
// tracking keeps such an expression past the write (gcc -O3 seed 4650:
// fn04's a as R15 ^ 197 from 0x1308, where mov %rbx,%r15 at 0x12f0 moved
// fn00's r into R15, after mov %r15,%r8 and xor $0xc5,%r8b computed
// a ^ 197 in R8; seed 4808: fn04's b as RBX ^ 88 after mov 0x40(%rsp),%rbx
// moved main's r there, the code's mov %ebx,%eax; xor $0x58,%eax before
// it), and every reader of the debug info, gdb too, prints a wrong value.
// It returns why the value is not read, or "".
func (vc *valueChecks) opOnOldCopy(addr uint64, name string, ops []types.Op) string {
	src, mem, rest, ok := salvageSource(ops)
	if !ok || mem != nil || len(rest) != 2 || rest[0].Code != types.OpConst {
		return ""
	}
	fl, back, k, moved := vc.lastMove(addr, name, src, ops, "")
	if moved == nil {
		return ""
	}
	w := back[k]
	for i := 1; i < len(back) && i <= salvageWindow; i++ {
		a := back[i]
		d, ok := appliesOp(fl.op[a], rest[1].Code, rest[0].Value)
		if !ok || d == src {
			continue
		}
		c, ok := vc.copyOf(fl, back, i, d, src)
		if !ok || c <= k || fl.writtenBetween(back[c], a, x86.RegBit(d), vc.arch) ||
			vc.writesOnChain(fl, back[k+1:c], src) || fl.writtenBetween(back[c], w, x86.RegBit(src), vc.arch) {
			continue
		}
		return fmt.Sprintf("the debug info gives %s, but %s holds %s from %#x on (%v writes it there), and the code applies the operation to %s, a copy of what %s held before (%v at %#x, %v at %#x): the expression was made for that value, so it would be wrong",
			types.OpsString(ops), src, moved.Name, w, fl.op[w].Op, d, src, fl.op[back[c]], back[c], fl.op[a], a)
	}
	return ""
}

// copyOf finds the nearest write of reg before back[i] on back (a chain
// of dominators, nearest first) and reports its index when it copies
// src.
func (vc *valueChecks) copyOf(fl *flow, back []uint64, i int, reg, src string) (int, bool) {
	bit := x86.RegBit(reg)
	for j := i + 1; j < len(back); j++ {
		in := fl.op[back[j]]
		if x86.Writes(vc.arch, in, false)&bit == 0 {
			continue
		}
		s, ok := copied(in)
		return j, ok && in.Op == x86asm.MOV && s == src
	}
	return 0, false
}

// writesOnChain reports whether an instruction of xs writes reg.
func (vc *valueChecks) writesOnChain(fl *flow, xs []uint64, reg string) bool {
	for _, x := range xs {
		if x86.Writes(vc.arch, fl.op[x], false)&x86.RegBit(reg) != 0 {
			return true
		}
	}
	return false
}

// keptCopy checks a parameter v of an inlined call that the debug info
// gives as a register alone at addr against the code before it. When the
// last write of the register before addr moved another variable there
// (see lastMove), a move before that write copied the register into
// another one, D, which no instruction but a call writes from there to
// addr (the code relies on D across a call GCC knows keeps it), the
// debug info gives D to no variable at addr, and the code of the call
// reads D, never writes it, and never reads the register, the call
// takes its value from the copy: the register was given for what it held
// before. GCC gives fn12's c (fn04's a) as RBX from 0x224a on, where lea
// (%rax,%r13,1),%rbx put fn04's r there after mov %ebx,%r11d, and fn12's
// record stores R11 (gcc -O3 seed 11520: 20518 where the call passed
// 141, gdb too). It returns why the value is not read, or "".
func (vc *valueChecks) keptCopy(addr uint64, v *types.Var, c spec.Chain) string {
	if v == nil || !v.Param || v.Inline == "" || c.Reg == "" || len(c.Derefs) > 0 || len(c.Expr) > 0 || c.Field != nil {
		return ""
	}
	reg := c.Reg
	fl, back, k, moved := vc.lastMove(addr, v.Name, reg, []types.Op{{Code: types.OpReg, Reg: reg}}, "")
	site := vc.expansionAt(addr, v.Inline)
	if moved == nil || site == nil {
		return ""
	}
	w, bit := back[k], x86.RegBit(reg)
	for j := k + 1; j < len(back) && j <= k+salvageWindow; j++ {
		x := back[j]
		in := fl.op[x]
		if x86.Writes(vc.arch, in, false)&bit != 0 {
			return ""
		}
		dst, isReg := in.Args[0].(x86asm.Reg)
		s, ok := copied(in)
		d := gprName(dst)
		if !isReg || !ok || in.Op != x86asm.MOV || s != reg || d == reg || fl.writtenBetween(x, w, bit, vc.arch) ||
			vc.writtenButCalls(fl, x, addr, d) || vc.inRegAt(addr, v.Name, d) != nil || !vc.callUses(fl, site, d, reg) {
			continue
		}
		return fmt.Sprintf("the debug info gives %s, but %s holds %s from %#x on (%v writes it there), and the code of this call reads %s instead, a copy of what %s held before (%v at %#x): the register was given for that value, so it would be wrong",
			reg, reg, moved.Name, w, fl.op[w].Op, d, reg, in, x)
	}
	return ""
}

// writtenButCalls reports whether control can go from x to addr through
// an instruction other than a call that may write reg, or a call when reg
// holds what calls return.
func (vc *valueChecks) writtenButCalls(fl *flow, x, addr uint64, reg string) bool {
	bit := x86.RegBit(reg)
	ret := x86.RegBit("RAX") | x86.RegBit("RDX")
	from, to := fl.between(x, addr, fl.succ), fl.between(addr, x, fl.pred)
	for y := range from {
		in := fl.op[y]
		if !to[y] || x86.Writes(vc.arch, in, false)&bit == 0 || in.Op == x86asm.CALL && bit&ret == 0 {
			continue
		}
		return true
	}
	return len(fl.indirect) > 0
}

// callUses reports whether the code of site reads d, never writes it,
// and never mentions reg.
func (vc *valueChecks) callUses(fl *flow, site *types.InlineSite, d, reg string) bool {
	fd, fr := familyOf(d), familyOf(reg)
	reads := false
	for _, a := range fl.addrs {
		if !holds(site.Ranges, a) {
			continue
		}
		in := fl.op[a]
		if x86.Writes(vc.arch, in, false)&x86.RegBit(d) != 0 && in.Op != x86asm.CALL {
			return false
		}
		for i, arg := range in.Args {
			var fams []int
			switch arg := arg.(type) {
			case x86asm.Reg:
				if i == 0 && in.Op == x86asm.MOV {
					continue // written, not read
				}
				fams = []int{x86.Family(arg)}
			case x86asm.Mem:
				fams = []int{x86.Family(arg.Base), x86.Family(arg.Index)}
			}
			for _, f := range fams {
				if f == fr && f >= 0 {
					return false
				}
				reads = reads || f == fd && f >= 0
			}
		}
	}
	return reads
}
