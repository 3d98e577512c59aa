package probe

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// slotOpElsewhere checks a parameter v of an inlined call that the debug
// info computes from a stack slot with a multiplication and an addition
// of constants (f of the slot's value: [CFA-104]*5+7) against the code of
// the call. Where the code of the call's expansion (or the code straight
// after addr: see straightAfter; or the straightLook instructions up
// addr's dominators, where GCC computes a call's arguments) computes f
// of a register in one instruction (lea 0x7(%r12,%r12,4),%esi), the
// register holds nothing loaded from the slot, that code computes f of
// nothing loaded from the slot, no store that reaches addr fills it from that register or a copy of it, and the
// debug info computes no other parameter of the call from that register,
// the code computes the value from the register: the debug info put the
// slot in its place. GCC gives fn08's a and b as [CFA-104]*5+7 and
// [CFA-104]*9+3, one slot, which holds fn06's c, where the code computes
// 5*R12+7 from fn06's a and 9*R14+3 from main's i (gcc-O2/O3 seed 4594:
// 42 where the call passed 22, gdb too; gcc -O3 seed 4913: fn13's b as
// ([CFA-160]<<3)+2, the code's lea 0x2(,%r15,8),%edx; seed 11073:
// fn05's c as [CFA-88]*5+2 of a slot the expansion fills with and loads
// as fn05's a, where main computes lea 0x2(%r15,%r15,4) before the
// call). It returns why
// the value is not read, or "". GCC's only: LLVM computes a value in a
// register and spills another form of it (rust-O3 seed 11582: fn05's b
// right from the slot beside lea of RSI*3+k).
func (vc *valueChecks) slotOpElsewhere(addr uint64, v *types.Var, vars []types.Var, c spec.Chain, size int64) string {
	if v == nil || !v.Param || v.Inline == "" || len(c.Expr) == 0 {
		return ""
	}
	base, off, n, ok := chainSlot(c, size)
	if !ok {
		return ""
	}
	slot, ok := vc.slots.cfaSlot(addr, base, off)
	frame, _, okf := vc.frames.cfa(addr)
	fl := vc.flows.at(addr)
	site := vc.expansionAt(addr, v.Inline)
	if !ok || !okf || fl == nil || site == nil {
		return ""
	}
	want, ok := exprLin(c.Expr, "", func(i int) (lin, int, bool) {
		l, end, ok := vc.frameLoad(addr, frame, c.Expr, i)
		return lin{a: 1, low32: l.low32}, end, ok && l.slot == slot
	})
	if !ok || want.a <= 1 || want.b == 0 || want.s != 0 || !vc.flows.gnuAt(addr) || vc.computesOfSource(fl, addr, slot, n, want) {
		return ""
	}
	var at []uint64
	before := map[uint64]bool{}
	for _, a := range fl.dominating(addr, straightLook) {
		before[a] = true
	}
	for _, a := range fl.addrs {
		if !holds(site.Ranges, a) && !straightAfter(fl, addr, a) && !before[a] {
			continue
		}
		if r, ok := computesOf(fl.op[a], want); ok && vc.fromSlot(fl, a, r, slot, n, 0) {
			return "" // the code computes it from the slot too
		} else if ok {
			at = append(at, a)
		}
	}
	for _, a := range at {
		r, _ := computesOf(fl.op[a], want)
		if vc.storedFrom(addr, slot, n, r) || otherReads(vars, v, r) {
			return ""
		}
		return fmt.Sprintf("the debug info gives %s from the %d bytes at CFA%+d, but the code computes that operation from %s (%v at %#x), which holds nothing loaded from the slot, and the code computes it from the slot nowhere, so that value would be wrong",
			v.Name, n, slot, r, fl.op[a], a)
	}
	return ""
}

// computesOfSource reports whether the code up addr's dominators
// (salvageWindow of them) computes want of a register that holds what
// the stores that reach addr filled the slot with (their source or a
// register it copied): gcc -O2 seed 11506 gives fn01's a as
// [CFA-72]*3+1 of fn00's a, which mov %edi,%eax put in the slot, and
// computes lea 0x1(%rdi,%rdi,2),%r12d before the call, and fn01's own
// a*3+1 from R12 in the call.
func (vc *valueChecks) computesOfSource(fl *flow, addr uint64, slot, n int64, want lin) bool {
	_, stores := vc.slots.reachingStores(addr, slot, n)
	src := map[string]bool{}
	for _, x := range stores {
		from, ok := fl.op[x].Args[1].(x86asm.Reg)
		for s, d := gprName(from), 0; ok && s != "" && !src[s] && d < 4; s, d = vc.copiedInto(fl, x, s), d+1 {
			src[s] = true
		}
	}
	for _, a := range fl.dominating(addr, salvageWindow) {
		if r, ok := computesOf(fl.op[a], want); ok && src[r] {
			return true
		}
	}
	return false
}

// computesOf is the register whose value in computes want of, x of
// want being the register's value, in one step (an address computation,
// an operation with an immediate).
func computesOf(in x86asm.Inst, want lin) (string, bool) {
	if dst, ok := in.Args[0].(x86asm.Reg); !ok || gprName(dst) == "" {
		return "", false
	}
	var regs []x86asm.Reg
	for _, a := range in.Args {
		switch a := a.(type) {
		case x86asm.Reg:
			regs = append(regs, a)
		case x86asm.Mem:
			regs = append(regs, a.Base, a.Index)
		}
	}
	for _, r := range regs {
		if gprName(r) == "" {
			continue
		}
		v, ok := linStep(in, map[int]lin{x86.Family(r): {a: 1}}, nil)
		if ok && v.same(want) {
			return gprName(r), true
		}
	}
	return "", false
}

// fromSlot reports whether reg may hold at a what the code loaded from
// any of the n bytes at slot: walking back along every path, the first
// write of reg loads from there or from memory not known to be another
// slot, or copies a register that may (through up to 4 copies), or the
// walk cannot tell.
func (vc *valueChecks) fromSlot(fl *flow, a uint64, reg string, slot, n int64, depth int) bool {
	if depth > 4 {
		return true
	}
	bit := x86.RegBit(reg)
	may := false
	ok := fl.walkBack(a, maxReach, func(x uint64) walk {
		in := fl.op[x]
		if x86.Writes(vc.arch, in, false)&bit == 0 {
			if fl.fromBefore(x) {
				may = true // what the caller left in reg: not known
				return walkFail
			}
			return walkOn
		}
		if s, ok := copied(in); ok && in.Op == x86asm.MOV && vc.fromSlot(fl, x, s, slot, n, depth+1) || vc.loadsSlot(x, in, slot, n) {
			may = true
			return walkFail
		}
		return walkStop
	})
	return may || !ok
}

// loadsSlot reports whether in, at x, may load any of the n bytes at
// slot: it reads memory that is not another stack slot.
func (vc *valueChecks) loadsSlot(x uint64, in x86asm.Inst, slot, n int64) bool {
	if in.Op == x86asm.LEA {
		return false
	}
	for _, arg := range in.Args[1:] {
		mem, ok := arg.(x86asm.Mem)
		if !ok || mem.Base == x86asm.RIP && mem.Index == 0 {
			continue
		}
		at, ok := vc.slots.cfaSlot(x, gprName(mem.Base), int64(mem.Disp))
		if !ok || mem.Index != 0 || at < slot+n && slot < at+int64(in.MemBytes) {
			return true
		}
	}
	return false
}

// storedFrom reports whether a store that reaches addr may fill any of
// the n bytes at slot from reg: from it or a copy of it, or the stores
// are not known.
func (vc *valueChecks) storedFrom(addr uint64, slot, n int64, reg string) bool {
	fl, stores := vc.slots.reachingStores(addr, slot, n)
	if fl == nil || len(stores) == 0 {
		return true
	}
	for _, x := range stores {
		from, ok := fl.op[x].Args[1].(x86asm.Reg)
		if !ok {
			continue
		}
		if s := gprName(from); s == reg || vc.copiedInto(fl, x, s) == reg {
			return true
		}
	}
	return false
}

// otherReads reports whether the debug info computes a parameter of v's
// call other than v from reg.
func otherReads(vars []types.Var, v *types.Var, reg string) bool {
	for i := range vars {
		w := &vars[i]
		if w.Param && w.Inline == v.Inline && w.Name != v.Name && readsReg(w.Loc, reg) {
			return true
		}
	}
	return false
}
