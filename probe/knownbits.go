package probe

import (
	"math/bits"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
)

// knownBits are the bits of a register's value the code proves: those of
// mask, whose values are those of val.
type knownBits struct{ mask, val uint64 }

// low is how many of the lowest bits are known, from bit 0 up.
func (k knownBits) low() int { return bits.TrailingZeros64(^k.mask) }

// lowOnly keeps the lowest n known bits (arithmetic carries upward only).
func lowOnly(n int, v uint64) knownBits {
	if n >= 64 {
		return knownBits{^uint64(0), v}
	}
	m := uint64(1)<<n - 1
	return knownBits{m, v & m}
}

// union is what both k and o prove.
func (k knownBits) union(o knownBits) knownBits {
	return knownBits{k.mask | o.mask, k.val&k.mask | o.val&o.mask&^k.mask}
}

// maxKnownDepth bounds how many definitions knownAt follows back.
const maxKnownDepth = 6

// knownWindow bounds how many dominators knownAt reads back.
const knownWindow = 128

// knownAt are the bits of register family fam the code proves at a (before
// it runs): from the instruction that last wrote it on every path (its
// nearest dominator that writes it, no other path writing it between),
// computed from what that reads (lea, add, sub, inc, dec, shl, and, or,
// xor, imul by a constant, copies and extensions, constants), joined with
// what dominating tests prove on the edge taken (test $1,%bpl; je else:
// bit 0 is 1 past it), no path between writing it. rust-O3 seed 2256
// computes fn06's a = b ^ 61 as ((3x+1) & -4) ^ 61 with x = a & -3 of an
// odd a: 3x+1 is a multiple of 4, the AND changes nothing.
func (cf *codeFacts) knownAt(fl *flow, a uint64, fam, depth int) knownBits {
	var out knownBits
	if fam < 0 || depth > maxKnownDepth {
		return out
	}
	regs := x86.RegSet(1) << fam
	back := fl.dominating(a, knownWindow)
	for i, b := range back {
		in := fl.op[b]
		child := a
		if i > 0 {
			child = back[i-1]
		}
		if x86.IsCondJump(in.Op) && x86.Writes(cf.arch, in, false)&regs == 0 {
			if i+1 >= len(back) {
				return out
			}
			if k, ok := cf.guardBits(fl, back[i+1], b, child, a, fam); ok {
				out = out.union(k)
			}
			continue
		}
		if x86.Writes(cf.arch, in, false)&regs == 0 {
			continue
		}
		if fl.writtenInto(b, a, regs, cf) {
			return out
		}
		return out.union(cf.defBits(fl, b, in, fam, depth))
	}
	return out
}

// guardBits are the bits of fam that the test at t, followed by the
// conditional jump at j, proves on the edge to child (child's only
// predecessor j) and so at a, where no path from child writes fam.
func (cf *codeFacts) guardBits(fl *flow, t, j, child, a uint64, fam int) (knownBits, bool) {
	ti, ji := fl.op[t], fl.op[j]
	reg, isReg := ti.Args[0].(x86asm.Reg)
	imm, isImm := ti.Args[1].(x86asm.Imm)
	if ti.Op != x86asm.TEST || !isReg || !isImm || x86.Family(reg) != fam || t+uint64(ti.Len) != j || len(fl.pred[j]) != 1 || len(fl.pred[child]) != 1 {
		return knownBits{}, false
	}
	target, ok := branchTarget(j, ji)
	fall := j + uint64(ji.Len)
	if !ok || target == fall || child != target && child != fall {
		return knownBits{}, false
	}
	regs := x86.RegSet(1) << fam
	if x86.Writes(cf.arch, fl.op[child], false)&regs != 0 && child != a || child != a && fl.writtenInto(child, a, regs, cf) {
		return knownBits{}, false
	}
	m := uint64(int64(imm)) & regMask(reg)
	if reg >= x86asm.AH && reg <= x86asm.BH {
		return knownBits{}, false // bits 8-15
	}
	zero := ji.Op == x86asm.JE && child == target || ji.Op == x86asm.JNE && child == fall
	nonzero := ji.Op == x86asm.JNE && child == target || ji.Op == x86asm.JE && child == fall
	switch {
	case zero:
		return knownBits{m, 0}, true
	case nonzero && bits.OnesCount64(m) == 1:
		return knownBits{m, m}, true
	}
	return knownBits{}, false
}

// defBits are the bits of fam the instruction in at b writes, where it is
// one knownAt follows.
func (cf *codeFacts) defBits(fl *flow, b uint64, in x86asm.Inst, fam, depth int) knownBits {
	d, ok := in.Args[0].(x86asm.Reg)
	if !ok || x86.Family(d) != fam {
		return knownBits{}
	}
	w32 := d >= x86asm.EAX && d <= x86asm.R15L
	if !w32 && (d < x86asm.RAX || d > x86asm.R15) {
		return knownBits{} // a byte or word write keeps the rest
	}
	src := func(arg x86asm.Arg) (knownBits, bool) {
		switch s := arg.(type) {
		case x86asm.Imm:
			return knownBits{^uint64(0), uint64(int64(s))}, true
		case x86asm.Reg:
			f := x86.Family(s)
			if f < 0 || s >= x86asm.AH && s <= x86asm.BH {
				return knownBits{}, false
			}
			k := cf.knownAt(fl, b, f, depth+1)
			if s >= x86asm.EAX && s <= x86asm.R15L {
				k = lowOnly(min(k.low(), 32), k.val)
			} else if s < x86asm.RAX || s > x86asm.R15 {
				k = lowOnly(min(k.low(), 8), k.val)
			}
			return k, true
		}
		return knownBits{}, false
	}
	var k knownBits
	switch in.Op {
	case x86asm.MOV, x86asm.MOVSXD, x86asm.MOVZX, x86asm.MOVSX:
		s, ok := src(in.Args[1])
		if !ok {
			return knownBits{}
		}
		k = lowOnly(s.low(), s.val)
	case x86asm.LEA:
		m, ok := in.Args[1].(x86asm.Mem)
		if !ok || m.Base == x86asm.RIP || m.Segment != 0 {
			return knownBits{}
		}
		n, v := 64, uint64(int64(m.Disp))
		if m.Base != 0 && m.Base == m.Index {
			// x + x*scale is x*(scale+1): its low zero bits are known
			// whatever x is.
			s, _ := src(m.Base)
			mul := uint64(m.Scale) + 1
			k = lowOnly(min(64, s.low()+bits.TrailingZeros64(mul)), v+s.val*mul)
			break
		}
		if m.Base != 0 {
			s, _ := src(m.Base)
			n, v = min(n, s.low()), v+s.val
		}
		if m.Index != 0 {
			s, _ := src(m.Index)
			sh := bits.TrailingZeros8(m.Scale)
			n, v = min(n, s.low()+sh), v+s.val<<sh
		}
		k = lowOnly(n, v)
	case x86asm.ADD, x86asm.SUB, x86asm.IMUL, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.SHL:
		if in.Args[1] == d && (in.Op == x86asm.XOR || in.Op == x86asm.SUB) {
			return knownBits{^uint64(0), 0} // zeroes the register
		}
		x, _ := src(d)
		if in.Args[1] == d && in.Op == x86asm.ADD {
			k = lowOnly(min(64, x.low()+1), x.val*2)
			break
		}
		y, ok := src(in.Args[1])
		if in.Op == x86asm.IMUL && in.Args[1] == nil {
			return knownBits{} // the one-operand form: RDX:RAX
		}
		if in.Op == x86asm.IMUL && in.Args[2] != nil {
			x, y = y, knownBits{}
			y, ok = src(in.Args[2])
		}
		if !ok {
			return knownBits{}
		}
		k = combine(in.Op, x, y)
	case x86asm.INC, x86asm.DEC:
		x, _ := src(d)
		k = lowOnly(x.low(), x.val+map[bool]uint64{true: 1, false: ^uint64(0)}[in.Op == x86asm.INC])
	}
	if w32 {
		k = lowOnly(min(k.low(), 32), k.val)
	}
	return k
}

// combine are the bits op proves of x OP y.
func combine(op x86asm.Op, x, y knownBits) knownBits {
	n := min(x.low(), y.low())
	switch op {
	case x86asm.ADD:
		return lowOnly(n, x.val+y.val)
	case x86asm.SUB:
		return lowOnly(n, x.val-y.val)
	case x86asm.IMUL:
		// A product has the known low zeros of both factors (x times
		// 3<<32 ends in 32 zero bits whatever x is).
		z := min(64, min(x.low(), bits.TrailingZeros64(x.val))+min(y.low(), bits.TrailingZeros64(y.val)))
		return lowOnly(max(n, z), x.val*y.val)
	case x86asm.XOR:
		m := x.mask & y.mask
		return knownBits{m, (x.val ^ y.val) & m}
	case x86asm.AND:
		zero := x.mask&^x.val | y.mask&^y.val
		one := x.mask & x.val & y.mask & y.val
		return knownBits{zero | one, one}
	case x86asm.OR:
		one := x.mask&x.val | y.mask&y.val
		zero := x.mask &^ x.val & y.mask &^ y.val
		return knownBits{zero | one, one}
	case x86asm.SHL:
		if y.mask != ^uint64(0) || y.val >= 64 {
			return knownBits{}
		}
		return lowOnly(x.low()+int(y.val), x.val<<y.val)
	}
	return knownBits{}
}

// noOpAnd reports whether the AND at a clears only bits of its register
// that the code proves zero there: it changes nothing.
func (cf *codeFacts) noOpAnd(fl *flow, a uint64) bool {
	in := fl.op[a]
	d, isReg := in.Args[0].(x86asm.Reg)
	imm, isImm := in.Args[1].(x86asm.Imm)
	if in.Op != x86asm.AND || !isReg || !isImm {
		return false
	}
	clear := ^uint64(int64(imm))
	switch {
	case d >= x86asm.EAX && d <= x86asm.R15L:
		clear &= 0xffffffff
	case d < x86asm.RAX || d > x86asm.R15:
		return false
	}
	k := cf.knownAt(fl, a, x86.Family(d), 0)
	return clear&^k.mask == 0 && clear&k.val == 0
}

// noOps reports whether every instruction at as changes nothing of a
// value of size bytes: an AND that clears only bits the code proves
// clear (see noOpAnd), or, for 4 bytes or fewer, a shift right by 32 of
// a 64-bit register whose low 32 bits the code proves zero, which
// extends the 32-bit value the code computed in the high half (LLVM's
// sext of an i32: rust-O3 seed 3947 computes fn07's i32 a ^ 17 as
// ((x * 0x300000000) >> 32) ^ 17 of a stack slot's x, the debug info
// [RSP+200]^17 of the slot holding that i32, gdb prints it).
func (cf *codeFacts) noOps(fl *flow, as []uint64, size int64) bool {
	for _, a := range as {
		if !cf.noOpAnd(fl, a) && (size > 4 || !cf.extends32(fl, a)) {
			return false
		}
	}
	return len(as) > 0
}

// extends32 reports whether the instruction at a shifts a 64-bit
// register right by 32 where the code proves its low 32 bits zero.
func (cf *codeFacts) extends32(fl *flow, a uint64) bool {
	in := fl.op[a]
	d, isReg := in.Args[0].(x86asm.Reg)
	imm, isImm := in.Args[1].(x86asm.Imm)
	if in.Op != x86asm.SAR && in.Op != x86asm.SHR || !isReg || !isImm || imm != 32 || d < x86asm.RAX || d > x86asm.R15 {
		return false
	}
	k := cf.knownAt(fl, a, x86.Family(d), 0)
	return k.low() >= 32 && uint32(k.val) == 0
}

// regMask are the bits of its 64-bit register that reg names.
func regMask(reg x86asm.Reg) uint64 {
	switch {
	case reg >= x86asm.RAX && reg <= x86asm.R15:
		return ^uint64(0)
	case reg >= x86asm.EAX && reg <= x86asm.R15L:
		return 0xffffffff
	case reg >= x86asm.AX && reg <= x86asm.R15W:
		return 0xffff
	}
	return 0xff
}

// writtenInto reports whether control can reach a from an instruction
// that may write one of regs without passing b on the way (b dominating
// a): then what b left there need not be what a sees, by another path or
// by a loop's later iteration.
func (fl *flow) writtenInto(b, a uint64, regs x86.RegSet, cf *codeFacts) bool {
	for x := range fl.between(a, b, fl.pred) {
		if x != a && x86.Writes(cf.arch, fl.op[x], false)&regs != 0 {
			return true
		}
	}
	return len(fl.indirect) > 0
}
