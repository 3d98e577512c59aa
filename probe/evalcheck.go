package probe

import (
	"fmt"
	"math/bits"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// contradicted checks an expression of one register, constants and
// several operations, the last an exclusive or with a constant (LLVM's
// (RCX*3 | 1) ^ 84),
// against the code before addr: where the code computes a value with that
// last operation and constant from a value it computed from the same
// register (through copies, extensions, LEA and operations with an
// immediate; see codeSlice), the register unchanged from there to addr,
// both are evaluated for values the register can hold there (its low bits
// the code proves: see knownAt). Where they differ, the debug info
// describes another value than the code computes: LLVM rewrites
// (3x+1) ^ 85 of an odd 3x+1 as (3x) ^ 84 and keeps 1 in the debug info
// as an OR where the code dropped it (rust-O3 seed 2734: 83 printed where
// the call passed 82, gdb too; 3530: (R13|1)^190 where the code computes
// (R13&-2)^190). Where they agree, or the code computes no such value, it
// returns "".
func (vc *valueChecks) contradicted(addr uint64, ops []types.Op) string {
	src, nops, ok := oneRegArith(ops)
	if !ok || nops < 2 || len(ops) < 2 || ops[len(ops)-2].Code != types.OpConst {
		return ""
	}
	// An exclusive or with a constant only: a value the code computes
	// with the same addition of 1 from the same register is too often
	// another one (gcc -O3 seed 6006: main's a+1 in RAX beside fn10's
	// a = RDX*3+1, computed after the site).
	if ops[len(ops)-1].Code != types.OpXor {
		return ""
	}
	want, k := x86asm.XOR, ops[len(ops)-2].Value
	fl := vc.flows.at(addr)
	if fl == nil {
		return ""
	}
	fam := familyOf(src)
	back := fl.dominating(addr, evalWindow)
	for i, a := range back {
		in := fl.op[a]
		imm, isImm := in.Args[1].(x86asm.Imm)
		if in.Op != want || !isImm || int32(imm) != int32(k) {
			continue
		}
		code, text, at, ok := vc.codeSlice(fl, addr, back[i:], fam)
		if !ok {
			continue
		}
		known := vc.facts.knownAt(fl, at, fam, 0)
		for _, v := range probeValues {
			v = v&^known.mask | known.val
			d, ok := evalArith(ops, v)
			if !ok {
				return ""
			}
			if uint32(d) != uint32(code(v)) {
				return fmt.Sprintf("the debug info gives %s, but the code computes it otherwise: %s (at %#x), %#x where the debug info says %#x for %s = %#x, so that value would be wrong",
					types.OpsString(ops), text, a, uint32(code(v)), uint32(d), src, v)
			}
		}
		return ""
	}
	return ""
}

// evalWindow bounds how far back from a site contradicted reads the code:
// LLVM computes a value once for six unrolled copies of a body, the last
// copy's site 150 instructions past it (rust-O3 seed 2734).
const evalWindow = 256

// probeValues are the register values contradicted tries: small and
// large, odd and even, with bits set across both halves.
var probeValues = []uint64{0, 1, 2, 3, 4, 5, 7, 8, 0x55, 0xaa, 0xff, 0x100, 0x1234, 0x7fffffff, 0x80000000,
	0xdeadbeef, 0xffffffff, 0x100000003, 0x0123456789abcdef, ^uint64(0), ^uint64(1)}

// oneRegArith reports whether ops compute from one register and constants
// with arithmetic alone, and how many operations they apply.
func oneRegArith(ops []types.Op) (reg string, n int, ok bool) {
	for _, o := range ops {
		switch o.Code {
		case types.OpReg:
			if reg != "" && o.Reg != reg {
				return "", 0, false
			}
			reg = o.Reg
		case types.OpConst:
		case types.OpPlus, types.OpMinus, types.OpMul, types.OpAnd, types.OpOr, types.OpXor, types.OpShl, types.OpShr,
			types.OpShra, types.OpNeg, types.OpNot, types.OpZext, types.OpSext:
			n++
		default:
			return "", 0, false
		}
	}
	return reg, n, reg != ""
}

// evalArith evaluates ops (see oneRegArith) with v in their register.
func evalArith(ops []types.Op, v uint64) (uint64, bool) {
	var st []uint64
	for _, o := range ops {
		n := len(st)
		switch o.Code {
		case types.OpReg:
			st = append(st, v)
			continue
		case types.OpConst:
			st = append(st, uint64(o.Value))
			continue
		case types.OpNeg, types.OpNot, types.OpZext, types.OpSext:
			if n < 1 {
				return 0, false
			}
			st[n-1] = unary(o, st[n-1])
			continue
		}
		if n < 2 {
			return 0, false
		}
		x, y := st[n-2], st[n-1]
		var z uint64
		switch o.Code {
		case types.OpPlus:
			z = x + y
		case types.OpMinus:
			z = x - y
		case types.OpMul:
			z = x * y
		case types.OpAnd:
			z = x & y
		case types.OpOr:
			z = x | y
		case types.OpXor:
			z = x ^ y
		case types.OpShl:
			z = x << (y & 63)
		case types.OpShr:
			z = x >> (y & 63)
		case types.OpShra:
			z = uint64(int64(x) >> (y & 63))
		default:
			return 0, false
		}
		st = append(st[:n-2], z)
	}
	if len(st) != 1 {
		return 0, false
	}
	return st[0], true
}

// unary applies a one-operand operation of oneRegArith's.
func unary(o types.Op, x uint64) uint64 {
	switch o.Code {
	case types.OpNeg:
		return -x
	case types.OpNot:
		return ^x
	}
	if o.Value <= 0 || o.Value >= 8 {
		return x
	}
	sh := uint(64 - 8*o.Value)
	if o.Code == types.OpZext {
		return x << sh >> sh
	}
	return uint64(int64(x<<sh) >> sh)
}

// familyOf is the register family of a pt_regs name (see gprName), or -1.
func familyOf(name string) int {
	for f, n := range x86.GPRs {
		if n == name {
			return f
		}
	}
	return -1
}

// codeSlice follows the value the instruction at chain[0] computes back
// up chain (dominators, nearest first) through what wrote each register
// it came from, to a read of register family fam that no path from there
// to addr writes after: code is that value as a function of fam's value
// there, text its form, at the instruction that read fam. ok is false
// where the value comes from elsewhere, or through an instruction code
// does not follow.
func (vc *valueChecks) codeSlice(fl *flow, addr uint64, chain []uint64, fam int) (code func(uint64) uint64, text string, at uint64, ok bool) {
	code = func(v uint64) uint64 { return v }
	text = "%s"
	cur, user := -1, chain[0]
	for j, b := range chain {
		in := fl.op[b]
		if j > 0 && x86.Writes(vc.arch, in, false)&(1<<cur) == 0 {
			continue
		}
		d, isReg := in.Args[0].(x86asm.Reg)
		if !isReg || j > 0 && (x86.Family(d) != cur || fl.writtenInto(b, user, x86.RegSet(1)<<cur, vc.facts)) {
			return nil, "", 0, false
		}
		step, form, from, ok := sliceStep(in, d)
		if !ok {
			return nil, "", 0, false
		}
		outer := code
		code = func(v uint64) uint64 { return outer(step(v)) }
		text = fmt.Sprintf(text, form)
		cur, user = x86.Family(from), b
		if cur == fam && !fl.writtenInto(b, addr, x86.RegSet(1)<<fam, vc.facts) && x86.Writes(vc.arch, in, false)&(1<<fam) == 0 {
			return code, fmt.Sprintf(text, gprName(from)), b, true
		}
		if cur < 0 {
			return nil, "", 0, false
		}
	}
	return nil, "", 0, false
}

// sliceStep is what in computes into its destination d from the register
// it reads (from) as a function of that register's value, and the form of
// it with %s for that value; ok is false for an instruction codeSlice
// does not follow.
func sliceStep(in x86asm.Inst, d x86asm.Reg) (step func(uint64) uint64, form string, from x86asm.Reg, ok bool) {
	w32 := d >= x86asm.EAX && d <= x86asm.R15L
	if !w32 && (d < x86asm.RAX || d > x86asm.R15) {
		return nil, "", 0, false // a byte or word write keeps the rest
	}
	trunc := func(f func(uint64) uint64) func(uint64) uint64 {
		if !w32 {
			return f
		}
		return func(v uint64) uint64 { return uint64(uint32(f(v))) }
	}
	switch in.Op {
	case x86asm.MOV, x86asm.MOVSXD, x86asm.MOVZX, x86asm.MOVSX:
		s, ok := in.Args[1].(x86asm.Reg)
		if !ok || s >= x86asm.AH && s <= x86asm.BH {
			return nil, "", 0, false
		}
		n := 64 - bits.Len64(regMask(s))
		sign := in.Op == x86asm.MOVSXD || in.Op == x86asm.MOVSX
		ext := func(v uint64) uint64 {
			if sign {
				return uint64(int64(v<<n) >> n)
			}
			return v << n >> n
		}
		return trunc(ext), "%s", s, true
	case x86asm.LEA:
		m, ok := in.Args[1].(x86asm.Mem)
		if !ok || m.Base == x86asm.RIP || m.Segment != 0 || m.Base == 0 && m.Index == 0 || m.Base != 0 && m.Index != 0 && m.Base != m.Index {
			return nil, "", 0, false
		}
		mul, reg := uint64(m.Scale), m.Index
		if m.Base != 0 {
			mul, reg = mul+1, m.Base
			if m.Index == 0 {
				mul = 1
			}
		}
		disp := uint64(int64(m.Disp))
		form := fmt.Sprintf("(%%s*%d%+d)", mul, int64(disp))
		if disp == 0 {
			form = fmt.Sprintf("(%%s*%d)", mul)
		}
		return trunc(func(v uint64) uint64 { return v*mul + disp }), form, reg, true
	case x86asm.ADD, x86asm.SUB, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.SHL, x86asm.SHR, x86asm.SAR:
		imm, ok := in.Args[1].(x86asm.Imm)
		if !ok {
			return nil, "", 0, false
		}
		k := uint64(int64(imm))
		f := map[x86asm.Op]func(uint64) uint64{
			x86asm.ADD: func(v uint64) uint64 { return v + k }, x86asm.SUB: func(v uint64) uint64 { return v - k },
			x86asm.AND: func(v uint64) uint64 { return v & k }, x86asm.OR: func(v uint64) uint64 { return v | k },
			x86asm.XOR: func(v uint64) uint64 { return v ^ k }, x86asm.SHL: func(v uint64) uint64 { return v << (k & 63) },
			x86asm.SHR: func(v uint64) uint64 {
				if w32 {
					return uint64(uint32(v) >> (k & 31))
				}
				return v >> (k & 63)
			},
			x86asm.SAR: func(v uint64) uint64 {
				if w32 {
					return uint64(int32(v) >> (k & 31))
				}
				return uint64(int64(v) >> (k & 63))
			},
		}[in.Op]
		return trunc(f), fmt.Sprintf("(%%s %v %#x)", in.Op, int64(imm)), d, true
	case x86asm.INC, x86asm.DEC, x86asm.NEG, x86asm.NOT:
		f := map[x86asm.Op]func(uint64) uint64{
			x86asm.INC: func(v uint64) uint64 { return v + 1 }, x86asm.DEC: func(v uint64) uint64 { return v - 1 },
			x86asm.NEG: func(v uint64) uint64 { return -v }, x86asm.NOT: func(v uint64) uint64 { return ^v },
		}[in.Op]
		return trunc(f), fmt.Sprintf("(%v %%s)", in.Op), d, true
	}
	return nil, "", 0, false
}
