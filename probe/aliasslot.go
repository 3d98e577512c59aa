package probe

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// aliasedSlot checks a parameter v of an inlined call that the debug
// info computes from a stack slot (read as is, or with arithmetic on it
// and constants: c) against the stores that fill the slot and the code.
// When every store that reaches addr writes exactly the bytes read from
// one register, which nothing writes from the store to addr, and the
// code of the call never reads or writes the slot, the slot holds what
// that register holds; it is not v's when either
//   - the debug info gives that register, whole, to another parameter of
//     the call at addr: v would be read as a copy of it, where a call that
//     passes one value twice gets one location for both (GCC gives fn11's
//     a and b both as [RSP+20], or both as RSI; gcc -O3 seed 10206's
//     fn11(a, 72, a) gives a a slot and c a register, but fn11's code
//     reads the slot: read); or
//   - GCC compiled the code, and it applies the expression's last
//     operation and constant to a copy of another register, never to the
//     slot's (see computedElsewhere). LLVM computes one value in two
//     registers (rust-O3 seed 4589: fn02's c as [CFA-136]^193, the slot
//     filled from RDX = 3*RSI, where the code xors a copy of RBX, RSI*3
//     sign-extended: the same value).
//
// Where the code computes the expression's value from the register the
// slot was filled from, the slot is v's (see computedFromSource).
//
// GCC's variable tracking loses a slot's reuse so (gcc -O3 seed 3969:
// fn03's b as [RSP+48] at 0x1503, which mov %r14d,0x30(%rsp) fills from
// a's R14, and fn11's b as [RSP+48]<<1 at 0x1336, where the code doubles
// R13; seed 3950: fn10's b as [RSP+80]^41 after mov %r15d,0x50(%rsp) gave
// the slot a's R15 over b's spill; gdb prints the same wrong values). It
// returns why the value is not read, or "".
func (vc *valueChecks) aliasedSlot(addr uint64, v *types.Var, vars []types.Var, c spec.Chain, size int64) string {
	if v == nil || !v.Param || v.Inline == "" {
		return ""
	}
	base, off, n, ok := chainSlot(c, size)
	if !ok {
		return ""
	}
	slot, ok := vc.slots.cfaSlot(addr, base, off)
	if !ok {
		return ""
	}
	fl, stores := vc.slots.reachingStores(addr, slot, n)
	src := ""
	for _, x := range stores {
		from, ok := fl.op[x].Args[1].(x86asm.Reg)
		name := gprName(from)
		if !ok || fl.op[x].Op != x86asm.MOV || name == "" || src != "" && name != src ||
			!vc.slots.storesExactly(fl, x, slot, n) || fl.writtenBetween(x, addr, x86.RegBit(name), vc.arch) {
			return ""
		}
		src = name
	}
	if src == "" || vc.expansionTouches(addr, v.Inline, slot, n) || vc.computedFromSource(fl, addr, v.Inline, c, src, stores[0], n, size) {
		return ""
	}
	filled := fmt.Sprintf("the debug info gives %s from the %d bytes at CFA%+d, which the store at %#x (%v) fills from %s, unchanged since, and the code of this call never reads the slot",
		v.Name, n, slot, stores[0], fl.op[stores[0]], src)
	for i := range vars {
		w := &vars[i]
		if w.Param && w.Inline == v.Inline && w.Name != v.Name && inReg(w.Loc, src) && asIs(c) {
			return fmt.Sprintf("%s; it gives %s to %s, another parameter of this call: the slot holds %s's value (a call that passes one value twice gets one location for both), so that value would be wrong",
				filled, src, w.Name, w.Name)
		}
	}
	if at, from, ok := vc.computedElsewhere(fl, addr, v.Inline, c.Expr, src); ok && vc.flows.gnuAt(addr) {
		return fmt.Sprintf("%s; the code computes %s's operation from %s instead (%v at %#x), so that value would be wrong",
			filled, v.Name, from, fl.op[at], at)
	}
	return ""
}

// computedElsewhere reports whether the code of the expansion of fn that
// holds addr (or the code right after addr: see straightAfter) applies the last operation of ops, a slot's load and one
// operation with a constant (shl, xor, plus), to a copy of another
// register than src and never to a copy of src or a load: where, and
// from which register.
func (vc *valueChecks) computedElsewhere(fl *flow, addr uint64, fn string, ops []types.Op, src string) (uint64, string, bool) {
	if len(ops) < 3 || ops[len(ops)-2].Code != types.OpConst {
		return 0, "", false
	}
	site := vc.expansionAt(addr, fn)
	if site == nil {
		return 0, "", false
	}
	k, code := ops[len(ops)-2].Value, ops[len(ops)-1].Code
	at, from := uint64(0), ""
	for _, a := range fl.addrs {
		if !holds(site.Ranges, a) && !straightAfter(fl, addr, a) {
			continue
		}
		d, ok := appliesOp(fl.op[a], code, k)
		if !ok {
			continue
		}
		s := vc.copiedInto(fl, a, d)
		if s == "" || s == src {
			return 0, "", false
		}
		at, from = a, s
	}
	return at, from, at != 0
}

// straightLook bounds the instructions after a site that the code
// reaches without a branch, where computedElsewhere looks too: GCC gives
// the computation of an argument to the caller's line.
const straightLook = 16

// straightAfter reports whether control goes from addr to a without a
// branch, a within straightLook instructions.
func straightAfter(fl *flow, addr, a uint64) bool {
	x := addr
	for range straightLook {
		if len(fl.succ[x]) != 1 {
			return false
		}
		if x = fl.succ[x][0]; x == a {
			return true
		}
	}
	return false
}

// appliesOp is the register in applies the operation code with constant
// k to, in place: xor $k, shl $k (add of a register to itself for 1),
// add $k.
func appliesOp(in x86asm.Inst, code types.OpCode, k int64) (string, bool) {
	dst, ok := in.Args[0].(x86asm.Reg)
	if !ok || gprName(dst) == "" {
		return "", false
	}
	if o, ok := in.Args[1].(x86asm.Reg); ok && code == types.OpShl && k == 1 && in.Op == x86asm.ADD && o == dst {
		return gprName(dst), true
	}
	imm, ok := in.Args[1].(x86asm.Imm)
	want := map[types.OpCode]x86asm.Op{types.OpXor: x86asm.XOR, types.OpShl: x86asm.SHL, types.OpPlus: x86asm.ADD}[code]
	if !ok || want == 0 || in.Op != want || int64(int32(imm)) != int64(int32(k)) {
		return "", false
	}
	return gprName(dst), true
}

// copiedInto is the register whose copy reg holds at a: the nearest
// write of reg on every path to a, when it is a move from another
// register; "" otherwise.
func (vc *valueChecks) copiedInto(fl *flow, a uint64, reg string) string {
	bit := x86.RegBit(reg)
	for _, w := range fl.dominating(a, staleWindow) {
		if x86.Writes(vc.arch, fl.op[w], false)&bit == 0 {
			continue
		}
		s, ok := copied(fl.op[w])
		if !ok || fl.op[w].Op != x86asm.MOV || s == reg {
			return ""
		}
		return s
	}
	return ""
}

// expansionTouches reports whether the code of the expansion of fn that
// holds addr reads or writes any of the n bytes at slot (an offset from
// the CFA), or that cannot be told.
func (vc *valueChecks) expansionTouches(addr uint64, fn string, slot, n int64) bool {
	site := vc.expansionAt(addr, fn)
	fl := vc.flows.at(addr)
	if site == nil || fl == nil {
		return true
	}
	for _, a := range fl.addrs {
		if !holds(site.Ranges, a) || fl.op[a].Op == x86asm.LEA {
			continue
		}
		for _, arg := range fl.op[a].Args {
			mem, ok := arg.(x86asm.Mem)
			if !ok || mem.Index != 0 || mem.Base == 0 {
				continue
			}
			if at, ok := vc.slots.cfaSlot(a, gprName(mem.Base), int64(mem.Disp)); ok && at < slot+n && slot < at+int64(fl.op[a].MemBytes) {
				return true
			}
		}
	}
	return false
}

// chainSlot splits a chain that reads a number from a stack slot: a
// register plus an offset loaded once (n = size bytes), or an expression
// that loads n bytes from a register or the CFA plus constants and
// computes from them with constants and arithmetic alone.
func chainSlot(c spec.Chain, size int64) (base string, off, n int64, ok bool) {
	if len(c.Expr) == 0 {
		if len(c.Derefs) != 1 || c.Reg == "" || c.Field != nil || size < 1 || size > 8 {
			return "", 0, 0, false
		}
		return c.Reg, c.Derefs[0], size, true
	}
	if len(c.Derefs) > 0 || c.Reg != "" {
		return "", 0, 0, false
	}
	base, off, n, ok = slotLoad(c.Expr)
	if !ok {
		return "", 0, 0, false
	}
	d := 0
	for c.Expr[d].Code != types.OpDeref {
		d++
	}
	for _, o := range c.Expr[d+1:] {
		if o.Code == types.OpReg || o.Code == types.OpDeref || o.Code == types.OpCFA {
			return "", 0, 0, false
		}
	}
	_, _, ok = oneRegArith(append([]types.Op{{Code: types.OpReg, Reg: "X"}}, c.Expr[d+1:]...))
	return base, off, n, ok
}

// callWindow bounds the instructions looked at up the dominators of a
// call for the computation of a call site's value.
const callWindow = 32

// callSlotElsewhere checks a call site's value that the caller's debug
// info computes from a stack slot with one operation and a constant
// (shl, xor, plus) against the code before the call at call: where the
// nearest instruction up its dominators that applies that operation and
// constant does so to a register that holds, through copies, a value
// the code computed from registers alone (no load), and no store that
// reaches the call fills the slot from those registers, the code
// computes the call's value from something else than the slot. GCC
// gives fn10.constprop.2's removed b for main's call at 0x16c8 as
// [CFA-96]^21, main's loop counter, as for its call at 0x165b, where the
// code computes b ^ 21 from a copy of RSI = 5*RBX+7 (gcc -O3 seed 4030:
// 20 where the call passed 18, gdb too). It returns why the value is not
// read, or "".
func (vc *valueChecks) callSlotElsewhere(call uint64, ops []types.Op) string {
	base, off, n, ok := slotLoad(ops)
	if !ok || len(ops) < 3 || ops[len(ops)-2].Code != types.OpConst || ops[len(ops)-3].Code != types.OpDeref {
		return ""
	}
	slot, ok := vc.slots.cfaSlot(call, base, off)
	fl := vc.flows.at(call)
	if !ok || fl == nil {
		return ""
	}
	k, code := ops[len(ops)-2].Value, ops[len(ops)-1].Code
	for _, a := range fl.dominating(call, callWindow) {
		d, ok := appliesOp(fl.op[a], code, k)
		if !ok {
			continue
		}
		chain, ok := vc.copyChain(fl, a, d)
		if !ok {
			return ""
		}
		_, stores := vc.slots.reachingStores(call, slot, n)
		for _, x := range stores {
			if from, ok := fl.op[x].Args[1].(x86asm.Reg); ok && chain[gprName(from)] {
				return ""
			}
		}
		return fmt.Sprintf("the debug info gives the call's value as %s, but the code computes it from registers (%v at %#x), not from the slot, which no store fills from them",
			types.OpsString(ops), fl.op[a], a)
	}
	return ""
}

// copyChain follows the value reg holds at a up its copies to the write
// that computed it: the registers it passed through, and whether that
// write computed it from registers alone (no memory read).
func (vc *valueChecks) copyChain(fl *flow, a uint64, reg string) (map[string]bool, bool) {
	chain := map[string]bool{reg: true}
	for range 4 {
		var w uint64
		found := false
		for _, x := range fl.dominating(a, staleWindow) {
			if x86.Writes(vc.arch, fl.op[x], false)&x86.RegBit(reg) != 0 {
				w, found = x, true
				break
			}
		}
		if !found {
			return nil, false
		}
		in := fl.op[w]
		if s, ok := copied(in); ok && in.Op == x86asm.MOV {
			chain[s], reg, a = true, s, w
			continue
		}
		for _, arg := range in.Args {
			if _, isMem := arg.(x86asm.Mem); isMem && in.Op != x86asm.LEA {
				return nil, false
			}
		}
		return chain, true
	}
	return nil, false
}

// computedFromSource reports whether the code of the expansion of fn
// that holds addr (or the code straight after addr: see straightAfter)
// computes, from the value src held when the store at store filled the
// n bytes at the slot, the value the expression c makes of the slot:
// an instruction that applies the expression's last operation with its
// constant, followed back (see codeSlice) to a read of src that holds
// the stored value, agrees with the expression on every probe value, in
// the size bytes of the value. Then the slot is read as the code
// computes it (gcc -O3 seed 4637: fn12's a as ([CFA-136]<<1)^103, the
// slot filled from R13, which it gives b, where the code computes
// lea (%r13,%r13,1),%ecx; mov %ecx,%r8d; xor $0x67,%r8d).
func (vc *valueChecks) computedFromSource(fl *flow, addr uint64, fn string, c spec.Chain, src string, store uint64, n, size int64) bool {
	d := 0
	for d < len(c.Expr) && c.Expr[d].Code != types.OpDeref {
		d++
	}
	rest := c.Expr[min(d+1, len(c.Expr)):]
	site := vc.expansionAt(addr, fn)
	if len(rest) < 2 || rest[len(rest)-2].Code != types.OpConst || site == nil || size < 1 || size > 8 {
		return false
	}
	want, ok := salvageOps[rest[len(rest)-1].Code]
	if rest[len(rest)-1].Code == types.OpShl {
		want, ok = x86asm.SHL, true
	}
	ops := append([]types.Op{{Code: types.OpReg, Reg: src}}, rest...)
	bit, k := x86.RegBit(src), rest[len(rest)-2].Value
	for _, a := range fl.addrs {
		imm, isImm := fl.op[a].Args[1].(x86asm.Imm)
		if !ok || !holds(site.Ranges, a) && !straightAfter(fl, addr, a) || fl.op[a].Op != want || !isImm || int32(imm) != int32(k) {
			continue
		}
		code, _, at, sliced := vc.codeSlice(fl, a, append([]uint64{a}, fl.dominating(a, evalWindow)...), familyOf(src))
		if !sliced || fl.dominates(at, store) && fl.writtenBetween(at, store, bit, vc.arch) ||
			!fl.dominates(at, store) && (!fl.dominates(store, at) || fl.writtenBetween(store, at, bit, vc.arch)) {
			continue
		}
		if agrees(ops, code, n, size) {
			return true
		}
	}
	return false
}

// agrees reports whether ops, of a register's low n bytes, and code, of
// the whole register, give the same size bytes for every probe value.
func agrees(ops []types.Op, code func(uint64) uint64, n, size int64) bool {
	mask := func(v uint64, b int64) uint64 {
		if b >= 8 {
			return v
		}
		return v & (1<<(8*b) - 1)
	}
	for _, v := range probeValues {
		d, ok := evalArith(ops, mask(v, n))
		if !ok || mask(d, size) != mask(code(v), size) {
			return false
		}
	}
	return true
}

// asIs reports whether c reads its slot as it is, no operation after the
// load.
func asIs(c spec.Chain) bool {
	return len(c.Expr) == 0 || c.Expr[len(c.Expr)-1].Code == types.OpDeref
}
