package probe

import (
	"math/bits"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// lin is a value a*x+s*y+b (modulo 2^64) of one unknown x, the value a
// register holds at some point, and of y, the value of a stack slot (at
// slot, an offset from the CFA; none when s is 0); low32 is set when only
// its low 32 bits are known (a 32-bit operation made it, or the
// expression masks them).
type lin struct {
	a, b  uint64
	s     uint64
	slot  int64
	low32 bool
}

// same reports whether p and q are the same value of x and y, in the bits
// both know.
func (p lin) same(q lin) bool {
	if p.s != 0 && q.s != 0 && p.slot != q.slot {
		return false
	}
	if p.low32 || q.low32 {
		return uint32(p.a) == uint32(q.a) && uint32(p.b) == uint32(q.b) && uint32(p.s) == uint32(q.s)
	}
	return p.a == q.a && p.b == q.b && p.s == q.s
}

// plus is p + k*q; ok is false when they read two different slots.
func (p lin) plus(q lin, k uint64) (lin, bool) {
	if p.s != 0 && q.s != 0 && p.slot != q.slot {
		return lin{}, false
	}
	v := lin{a: p.a + k*q.a, b: p.b + k*q.b, s: p.s + k*q.s, slot: p.slot, low32: p.low32 || q.low32}
	if p.s == 0 {
		v.slot = q.slot
	}
	return v, true
}

// scaled is k*p.
func (p lin) scaled(k uint64) lin {
	return lin{a: p.a * k, b: p.b * k, s: p.s * k, slot: p.slot, low32: p.low32}
}

// exprLin is the expression ops as a linear value of register reg: reg,
// constants, +, -, * and << by a constant, and a mask or extension to 32
// bits; with load, also the value of a stack slot (load reads the load of
// it that begins at ops[i], and says where it ends). ok is false for
// anything else.
func exprLin(ops []types.Op, reg string, load func(i int) (lin, int, bool)) (lin, bool) {
	var st []lin
	isConst := func(p lin) bool { return p.a == 0 && p.s == 0 }
	for i := 0; i < len(ops); i++ {
		o := ops[i]
		n := len(st)
		if load != nil {
			if v, end, ok := load(i); ok {
				st, i = append(st, v), end
				continue
			}
		}
		switch o.Code {
		case types.OpReg:
			if o.Reg != reg {
				return lin{}, false
			}
			st = append(st, lin{a: 1})
			continue
		case types.OpConst:
			st = append(st, lin{b: uint64(o.Value)})
			continue
		case types.OpNeg:
			if n < 1 {
				return lin{}, false
			}
			st[n-1] = st[n-1].scaled(^uint64(0))
			continue
		case types.OpZext, types.OpSext:
			if n < 1 || o.Value < 4 {
				return lin{}, false
			}
			st[n-1].low32 = st[n-1].low32 || o.Value == 4
			continue
		}
		if n < 2 {
			return lin{}, false
		}
		p, q := st[n-2], st[n-1]
		low := p.low32 || q.low32
		var v lin
		ok := true
		switch {
		case o.Code == types.OpPlus:
			v, ok = p.plus(q, 1)
		case o.Code == types.OpMinus:
			v, ok = p.plus(q, ^uint64(0))
		case o.Code == types.OpMul && isConst(q):
			v = p.scaled(q.b)
		case o.Code == types.OpMul && isConst(p):
			v = q.scaled(p.b)
		case o.Code == types.OpShl && isConst(q) && q.b < 64:
			v = p.scaled(1 << q.b)
		case o.Code == types.OpShra && isConst(q) && q.b == 32 && uint32(p.a) == 0 && uint32(p.b) == 0 && uint32(p.s) == 0:
			// x<<32>>32: the low 32 bits sign-extended.
			v, low = lin{a: p.a >> 32, b: p.b >> 32, s: p.s >> 32, slot: p.slot}, true
		case o.Code == types.OpAnd && isConst(q) && q.b == 0xffffffff:
			v, low = p, true
		default:
			return lin{}, false
		}
		if !ok {
			return lin{}, false
		}
		v.low32 = low
		st = append(st[:n-2], v)
	}
	if len(st) != 1 || st[0].a == 0 {
		return lin{}, false
	}
	return st[0], true
}

// frameLoad reads the load of a stack slot that begins at ops[i] (the CFA,
// or frame, the register the call frame information computes it from at
// addr, plus constants, then a load) as the slot's value, and says where
// it ends.
func (vc *valueChecks) frameLoad(addr uint64, frame string, ops []types.Op, i int) (lin, int, bool) {
	o := ops[i]
	if o.Code != types.OpCFA && (o.Code != types.OpReg || o.Reg != frame) {
		return lin{}, 0, false
	}
	base, off, n, ok := slotLoad(ops[i:])
	if !ok {
		return lin{}, 0, false
	}
	slot, ok := vc.slots.cfaSlot(addr, base, off)
	if !ok {
		return lin{}, 0, false
	}
	end := i + 1
	for ops[end].Code != types.OpDeref {
		end++
	}
	return lin{s: 1, slot: slot, low32: n == 4}, end, n == 4 || n == 8
}

// computes reports whether the code from w (which writes reg) up to addr
// and addr's own instruction compute, from what w left in reg, the value
// of the expression ops: a register comes to hold ops' value of that x.
// Then the expression was made for what reg holds after w, not before
// (rust-O3 seed 1452: c = i*5+2 as (RAX&0xffffffff)*5+2 after mov
// (%rsp),%rax loaded i over a copy of RSP, and the code's lea
// (%rax,%rax,4),%rcx; add $0x2,%ecx computes it so; gcc-O2 seed 2290:
// fn13's b as RCX^224 after lea (%rsi,%rsi,1),%rcx put fn12's a there,
// and past the record's branch mov %ecx,%eax; xor $0xe0,%al). The walk
// follows addr's dominators after w, a value read only where no other
// path since it was made writes its register. With frame (the register
// the call frame information computes the CFA from at addr), the
// expression may also load a stack slot, and the code's loads of that
// slot count; what a copy at w copied holds w's value too (gcc -O3 seed
// 5010: fn02's b as (R13 sign-extended)+u32[CFA-88] after mov
// %r15d,%r13d, which the code computes as movslq %r15d,%r9; mov
// 0x48(%rsp),%r14d; lea (%r9,%r14,1),%rcx), and a register keeps its
// value along the chain unless the chain writes it (a call GCC knows
// keeps a register: there gen_sink on the path past the record). Such a
// match keeps the value printed, as it was before the check.
func (vc *valueChecks) computes(fl *flow, w, addr uint64, reg string, ops []types.Op, frame string) bool {
	xk, isXor := xorOf(ops, reg)
	var load func(int) (lin, int, bool)
	if frame != "" {
		load = func(i int) (lin, int, bool) { return vc.frameLoad(addr, frame, ops, i) }
	}
	want, ok := exprLin(ops, reg, load)
	if !isXor && (!ok || want.same(lin{a: 1})) {
		return false
	}
	bit := x86.RegBit(reg)
	if bit == 0 {
		return false
	}
	// addr's own instruction too: it reads what the expression reads.
	chain := []uint64{addr}
	for _, d := range fl.dominating(addr, staleWindow) {
		if d == w {
			break
		}
		chain = append(chain, d)
	}
	if len(chain) > staleWindow {
		return false
	}
	type held struct {
		v  lin
		at uint64
	}
	hold := map[int]held{bits.TrailingZeros16(uint16(bit)): {lin{a: 1}, w}}
	if in := fl.op[w]; frame != "" && (in.Op == x86asm.MOV || in.Op == x86asm.MOVSXD) {
		if src, ok := in.Args[1].(x86asm.Reg); ok && x86.Family(src) >= 0 {
			hold[x86.Family(src)] = held{lin{a: 1, low32: in.DataSize == 32 || in.Op == x86asm.MOVSXD}, w}
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		x := chain[i]
		in := fl.op[x]
		regs := map[int]lin{}
		for f, h := range hold {
			if frame != "" || !fl.writtenInto(h.at, x, x86.RegSet(1)<<f, vc.facts) {
				regs[f] = h.v
			}
		}
		if isXor && xorsCopy(in, regs, xk) {
			return true
		}
		var slot func(x86asm.Mem) (int64, bool)
		if frame != "" {
			slot = func(m x86asm.Mem) (int64, bool) {
				if m.Index != 0 || m.Segment != 0 || gprName(m.Base) == "" {
					return 0, false
				}
				return vc.slots.cfaSlot(x, gprName(m.Base), int64(m.Disp))
			}
		}
		v, ok := linStep(in, regs, slot)
		for f := range hold {
			if x86.Writes(vc.arch, in, false)&(1<<f) != 0 {
				delete(hold, f)
			}
		}
		if !ok {
			continue
		}
		hold[x86.Family(in.Args[0].(x86asm.Reg))] = held{v, x}
		if !isXor && v.same(want) {
			return true
		}
	}
	return false
}

// linStep is the linear value in writes to its destination register, from
// the values regs holds: a copy, an address computation, an operation with
// an immediate; with slot, a load of a stack slot (slot reads its address
// as an offset from the CFA). ok is false for anything else.
func linStep(in x86asm.Inst, regs map[int]lin, slot func(x86asm.Mem) (int64, bool)) (lin, bool) {
	dst, ok := in.Args[0].(x86asm.Reg)
	if !ok || x86.Family(dst) < 0 {
		return lin{}, false
	}
	st := linState{in: in, regs: regs, slot: slot}
	old, haveOld := regs[x86.Family(dst)]
	var v lin
	switch in.Op {
	case x86asm.MOV, x86asm.MOVSXD:
		v, ok = st.operand(in.Args[1])
	case x86asm.LEA:
		v, ok = st.address()
	case x86asm.IMUL:
		v, ok = st.product()
	case x86asm.ADD, x86asm.SUB, x86asm.SHL:
		v, ok = st.combined(old, haveOld)
	case x86asm.INC, x86asm.DEC, x86asm.NEG:
		v, ok = stepped(in.Op, old), haveOld
	default:
		return lin{}, false
	}
	if !ok {
		return lin{}, false
	}
	if in.DataSize == 32 || in.Op == x86asm.MOVSXD {
		v.low32 = true
	} else if in.DataSize != 64 {
		return lin{}, false
	}
	return v, true
}

// linState is what linStep reads an instruction's operands from: the
// linear values registers hold and, when slot is not nil, the stack slot
// an operand in memory is (as an offset from the CFA).
type linState struct {
	in   x86asm.Inst
	regs map[int]lin
	slot func(x86asm.Mem) (int64, bool)
}

// operand is the linear value of a: a register's, an immediate, or a
// 4- or 8-byte load (mov) of a stack slot.
func (st linState) operand(a x86asm.Arg) (lin, bool) {
	switch a := a.(type) {
	case x86asm.Reg:
		v, ok := st.regs[x86.Family(a)]
		return v, ok
	case x86asm.Imm:
		return lin{b: uint64(int64(a))}, true
	case x86asm.Mem:
		if st.slot == nil || st.in.Op != x86asm.MOV || st.in.MemBytes != 4 && st.in.MemBytes != 8 {
			return lin{}, false
		}
		at, ok := st.slot(a)
		return lin{s: 1, slot: at}, ok
	}
	return lin{}, false
}

// address is the address lea computes: its displacement plus its base
// and scaled index registers' values.
func (st linState) address() (lin, bool) {
	m, isMem := st.in.Args[1].(x86asm.Mem)
	if !isMem || m.Segment != 0 || m.Base == x86asm.RIP {
		return lin{}, false
	}
	v := lin{b: uint64(m.Disp)}
	if m.Base != 0 {
		bv, ok := st.regs[x86.Family(m.Base)]
		if !ok {
			return lin{}, false
		}
		v, _ = v.plus(bv, 1)
	}
	if m.Index != 0 {
		iv, ok := st.regs[x86.Family(m.Index)]
		if !ok {
			return lin{}, false
		}
		return v.plus(iv, uint64(m.Scale))
	}
	return v, true
}

// product is what imul r, r/m, imm computes: the operand times the
// immediate.
func (st linState) product() (lin, bool) {
	src, ok1 := st.operand(st.in.Args[1])
	k, ok2 := st.in.Args[2].(x86asm.Imm)
	if !ok1 || !ok2 {
		return lin{}, false
	}
	return src.scaled(uint64(int64(k))), true
}

// combined is what add, sub or shl computes from the destination's old
// value and the source operand (shl by a constant under 64 only).
func (st linState) combined(old lin, haveOld bool) (lin, bool) {
	src, ok := st.operand(st.in.Args[1])
	if !ok || !haveOld {
		return lin{}, false
	}
	switch {
	case st.in.Op == x86asm.ADD:
		return old.plus(src, 1)
	case st.in.Op == x86asm.SUB:
		return old.plus(src, ^uint64(0))
	case src.a == 0 && src.s == 0 && src.b < 64:
		return old.scaled(1 << src.b), true
	}
	return lin{}, false
}

// stepped is what inc, dec or neg (op) makes of old.
func stepped(op x86asm.Op, old lin) lin {
	var v lin
	switch op {
	case x86asm.INC:
		v, _ = old.plus(lin{b: 1}, 1)
	case x86asm.DEC:
		v, _ = old.plus(lin{b: 1}, ^uint64(0))
	default:
		v = old.scaled(^uint64(0))
	}
	return v
}

// xorOf is k when ops is reg ^ k.
func xorOf(ops []types.Op, reg string) (uint64, bool) {
	if len(ops) == 5 && ops[1].Code == types.OpConst && ops[1].Value == 0xffffffff && ops[2].Code == types.OpAnd {
		// (RAX & 0xffffffff) ^ k: the low half's, as a 32-bit
		// register holds it (rust-O3 seed 3594: fn11's b = a ^ 191
		// of fn08's u32 a, mov %eax,%r10d; xor $0xbf,%r10d).
		ops = append([]types.Op{ops[0]}, ops[3:]...)
	}
	if len(ops) != 3 || ops[0].Code != types.OpReg || ops[0].Reg != reg || ops[1].Code != types.OpConst || ops[2].Code != types.OpXor {
		return 0, false
	}
	return uint64(ops[1].Value), true
}

// xorsCopy reports whether in computes x ^ k of a register holding x (a
// copy, x of regs' lin{a: 1}): an exclusive or with k on it, in a width
// that holds all of k's bits (xor $0xe0,%al of a copy of ECX).
func xorsCopy(in x86asm.Inst, regs map[int]lin, k uint64) bool {
	dst, isReg := in.Args[0].(x86asm.Reg)
	imm, isImm := in.Args[1].(x86asm.Imm)
	if in.Op != x86asm.XOR || !isReg || !isImm || dst >= x86asm.AH && dst <= x86asm.BH {
		return false
	}
	v, ok := regs[x86.Family(dst)]
	m := regMask(dst)
	return ok && v.a == 1 && v.b == 0 && k&^m == 0 && uint64(int64(imm))&m == k
}
