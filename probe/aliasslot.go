package probe

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// aliasedSlot checks a parameter v the debug info computes from a stack
// slot (read as is, or with arithmetic on it and constants: c) against
// the stores that fill the slot and the other parameters of the same
// call at addr (vars). When every store that reaches addr writes exactly
// the bytes read from one register, which nothing writes from the store
// to addr, and the debug info gives that register, whole, to another
// parameter of the same call there, the slot holds that parameter's
// value: v would be read as a copy of it. A call that passes one value
// twice gets one location for both (GCC gives fn11's a and b both as
// [RSP+20], or both as RSI); GCC's variable tracking loses a slot's
// reuse instead (gcc -O3 seed 3969: fn03's b as [RSP+48] at 0x1503,
// which mov %r14d,0x30(%rsp) fills from a's R14; seed 3950: fn10's b as
// [RSP+80]^41 after mov %r15d,0x50(%rsp) gave the slot a's R15 over
// b's spill; gdb prints the same wrong values). It returns why the value
// is not read, or "".
func (r *Resolver) aliasedSlot(addr uint64, v *types.Var, vars []types.Var, c spec.Chain, size int64) string {
	if v == nil || !v.Param {
		return ""
	}
	base, off, n, ok := chainSlot(c, size)
	if !ok {
		return ""
	}
	slot, ok := r.slots.cfaSlot(addr, base, off)
	if !ok {
		return ""
	}
	fl, stores := r.slots.reachingStores(addr, slot, n)
	if len(stores) == 0 {
		return ""
	}
	src := ""
	for _, x := range stores {
		from, ok := fl.op[x].Args[1].(x86asm.Reg)
		name := gprName(from)
		if !ok || fl.op[x].Op != x86asm.MOV || name == "" || src != "" && name != src ||
			!r.slots.storesExactly(fl, x, slot, n) || fl.writtenBetween(x, addr, x86.RegBit(name), r.arch) {
			return ""
		}
		src = name
	}
	if v.Inline == "" || r.expansionTouches(addr, v.Inline, slot, n) {
		return ""
	}
	for i := range vars {
		w := &vars[i]
		if w.Param && w.Inline == v.Inline && w.Name != v.Name && inReg(w.Loc, src) {
			return fmt.Sprintf("the debug info gives %s from the %d bytes at CFA%+d, which the store at %#x (%v) fills from %s, unchanged since, and gives %s to %s, another parameter of this call: the slot holds %s's value (a call that passes one value twice gets one location for both), so that value would be wrong",
				v.Name, n, slot, stores[0], fl.op[stores[0]], src, src, w.Name, w.Name)
		}
	}
	return ""
}

// expansionTouches reports whether the code of the expansion of fn that
// holds addr reads or writes any of the n bytes at slot (an offset from
// the CFA), or that cannot be told.
func (r *Resolver) expansionTouches(addr uint64, fn string, slot, n int64) bool {
	site := r.checks.expansionAt(addr, fn)
	fl := r.flows.at(addr)
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
			if at, ok := r.slots.cfaSlot(a, gprName(mem.Base), int64(mem.Disp)); ok && at < slot+n && slot < at+int64(fl.op[a].MemBytes) {
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
