package probe

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// maxReach bounds the instructions walked back from a site for the stores
// that reach it.
const maxReach = 4096

// mixedSlot checks a value read from a stack slot, n bytes at slot (an
// offset from the CFA), against the stores to it that reach addr: walking
// back along every path from addr, the first store on each path that
// writes any byte of the slot. Where one of them writes the n bytes
// exactly and another writes the slot with another width or offset, the
// slot holds on some paths what another statement left there: gcc -O3
// seed 2227 keeps main's i*3 at [RSP] with a 4-byte store, and on the
// path through fn03's tail an 8-byte store puts fn03's b there; GCC gives
// fn08's a as [CFA-160] on both (gdb prints b too). One store of any width
// is the value's own; stores of the same width may be spills of one value
// on two paths (gcc -O3 seed 1446). It returns why the value is not read,
// or "".
func (ss *slotStores) mixedSlot(addr uint64, slot, n int64) string {
	fl, stores := ss.reachingStores(addr, slot, n)
	if len(stores) < 2 {
		return ""
	}
	exact, other := uint64(0), uint64(0)
	for _, x := range stores {
		mem, _ := storeTo(fl.op[x])
		if at, _ := ss.cfaSlot(x, gprName(mem.Base), int64(mem.Disp)); at == slot && int64(fl.op[x].MemBytes) == n {
			exact = x
		} else {
			other = x
		}
	}
	if exact == 0 || other == 0 {
		return ""
	}
	return fmt.Sprintf("the debug info gives the %d bytes at CFA%+d, which the %d-byte store at %#x (%v) writes on some paths to the site, and the %d-byte store at %#x (%v) on others: there the slot holds what another statement left",
		n, slot, n, exact, fl.op[exact].Op, fl.op[other].MemBytes, other, fl.op[other].Op)
}

// reachingStores are the stores that reach addr writing any byte of the n
// bytes at slot (an offset from the CFA): walking back along every path
// from addr, the first such store on each path. None when addr's code is
// not decoded, has jumps of unknown targets, or the walk is too long.
func (ss *slotStores) reachingStores(addr uint64, slot, n int64) (*flow, []uint64) {
	fl := ss.flows.at(addr)
	if fl == nil {
		return nil, nil
	}
	var stores []uint64
	ok := fl.walkBack(addr, maxReach, func(x uint64) walk {
		if ss.writesSlot(fl, x, slot, n) {
			stores = append(stores, x)
			return walkStop
		}
		return walkOn
	})
	if !ok {
		return nil, nil
	}
	return fl, stores
}

// writesSlot reports whether the instruction at x stores to any byte of
// the n bytes at slot (an offset from the CFA).
func (ss *slotStores) writesSlot(fl *flow, x uint64, slot, n int64) bool {
	in := fl.op[x]
	mem, st := storeTo(in)
	if !st || mem.Index != 0 {
		return false
	}
	at, ok := ss.cfaSlot(x, gprName(mem.Base), int64(mem.Disp))
	return ok && at < slot+n && slot < at+int64(in.MemBytes)
}

// refillLook bounds the instructions walked forward from a site for the
// store that fills its slot.
const refillLook = 32

// refilled checks a value read from a stack slot, n bytes at slot,
// against the store that fills it: when control comes from addr without
// a branch (addr itself, or a few instructions on) to a store of those n
// bytes, and no other store of them reaches addr (the stores that do are
// that one, on its previous pass, or stores of another width or offset),
// the slot holds at addr what that store left on its previous pass or
// what another statement left, and the value the debug info means is the
// one the store is about to make. GCC gives an expansion's parameter so
// from its entry on where its scheduler moved the spill of the argument
// below it (gcc -O2 seed 2321: fn00's c as [CFA-80] at 0x1126, which `mov
// %ecx,0x20(%rsp)` fills at 0x112d: gdb prints the previous iteration's c
// too; gcc -O3 seed 3257: fn02's b, where an 8-byte store later in main's
// loop reaches the site). It returns why the value is not read, or "".
func (ss *slotStores) refilled(addr uint64, slot, n int64) string {
	fl, stores := ss.reachingStores(addr, slot, n)
	if fl == nil {
		return ""
	}
	x := addr
	for range refillLook {
		if ss.writesSlot(fl, x, slot, n) {
			break
		}
		if len(fl.succ[x]) != 1 {
			return ""
		}
		x = fl.succ[x][0]
	}
	if !ss.storesExactly(fl, x, slot, n) {
		return ""
	}
	for _, w := range stores {
		if w != x && ss.storesExactly(fl, w, slot, n) {
			return ""
		}
	}
	return fmt.Sprintf("the debug info gives the %d bytes at CFA%+d, which the store at %#x (%v) fills only after the site: there the slot holds what that store left on its previous pass, or another statement",
		n, slot, x, fl.op[x])
}

// storesExactly reports whether the instruction at x stores the n bytes at
// slot (an offset from the CFA), no more, no fewer.
func (ss *slotStores) storesExactly(fl *flow, x uint64, slot, n int64) bool {
	if !ss.writesSlot(fl, x, slot, n) {
		return false
	}
	mem, _ := storeTo(fl.op[x])
	at, _ := ss.cfaSlot(x, gprName(mem.Base), int64(mem.Disp))
	return at == slot && int64(fl.op[x].MemBytes) == n
}

// narrowSlot checks a value read from a stack slot, n bytes at slot,
// against the stores that reach addr: when each writes only the first m <
// n bytes of it, the others hold what another statement left there.
// LLVM gives a long parameter passed an unsigned int's value so (clang -O2
// seed 2379: fn12's a, fn06's b zero-extended, as the 8 bytes at [RSP+4],
// which a 4-byte store filled; gdb prints 0x10_00000013 for 19 too).
// Whether the value was sign- or zero-extended the debug info does not
// say. It returns why the value is not read, or "".
func (ss *slotStores) narrowSlot(addr uint64, slot, n int64) string {
	fl, stores := ss.reachingStores(addr, slot, n)
	if len(stores) == 0 {
		return ""
	}
	m := int64(0)
	for _, x := range stores {
		mem, _ := storeTo(fl.op[x])
		at, _ := ss.cfaSlot(x, gprName(mem.Base), int64(mem.Disp))
		w := int64(fl.op[x].MemBytes)
		if at != slot || w >= n || m != 0 && w != m {
			return ""
		}
		m = w
	}
	return fmt.Sprintf("the debug info gives the %d bytes at CFA%+d, but each store that reaches the site writes only the first %d (%#x: %v): the others hold what another statement left",
		n, slot, m, stores[0], fl.op[stores[0]])
}

// slotWrites checks a value read from the n bytes at slot against the
// stores that write the slot (see mixedSlot, refilled, narrowSlot and
// otherWidth).
func (ss *slotStores) slotWrites(addr uint64, slot, n int64) string {
	return cmp.Or(ss.mixedSlot(addr, slot, n), ss.refilled(addr, slot, n), ss.narrowSlot(addr, slot, n), ss.otherWidth(addr, slot, n))
}

// mixedChain checks a chain that reads a number from a stack slot (a
// register plus an offset, loaded once) with mixedSlot.
func (ss *slotStores) mixedChain(addr uint64, c spec.Chain, f *spec.Fetch) string {
	if len(c.Derefs) != 1 || len(c.Expr) > 0 || c.Reg == "" || f.Size < 1 || f.Size > 8 ||
		!strings.ContainsAny(f.Type[:1], "usx") {
		return ""
	}
	slot, ok := ss.cfaSlot(addr, c.Reg, c.Derefs[0])
	if !ok {
		return ""
	}
	return ss.slotWrites(addr, slot, f.Size)
}

// reusedSlot checks a Go value the debug info puts in a stack slot at addr
// (l, a location list's) against the stores to that slot that reach addr:
// walking back along every path, the first store on each that writes any
// byte of it. One that the list itself says the value was already in the
// slot at (after the stretch's first address, before its end) put another
// value there: cmd/compile gives a spilled value's slot to a later value
// once the first is dead, and its location lists keep the first in the
// slot (go seed 2312: (*S).fn10 spills b+c, fn12's c, to [RSP+16] and
// gives c the slot from 0x4a21f7 to 0x4a2353; at 0x4a2283 it stores r
// there, and fn12's expansion at 0x4a2288 would read r as c, as gdb
// does). A value changes in SSA form, never in its slot: its next value
// starts a location of its own. It returns why the value is not read, or
// "".
func (ss *slotStores) reusedSlot(addr uint64, l types.Loc, t types.Type) string {
	if len(l.Pieces) != 1 || l.From == 0 || addr < l.From || addr >= l.To {
		return ""
	}
	p := l.Pieces[0]
	base := "CFA" // a site's variables have their frame's register (see inFrame)
	switch p.Kind {
	case types.LocCFA:
	case types.LocMem:
		base = p.Reg
	default:
		return ""
	}
	slot, ok := ss.cfaSlot(addr, base, p.Offset)
	n, err := types.Sizeof(t)
	if !ok || err != nil || n < 1 || n > 8 {
		return ""
	}
	fl, stores := ss.reachingStores(addr, slot, n)
	for _, x := range stores {
		if x > l.From && x < l.To {
			return fmt.Sprintf("the debug info gives the %d bytes at CFA%+d from %#x on, but the store at %#x (%v) writes the slot after that, on a path to the site: the slot holds another value there",
				n, slot, l.From, x, fl.op[x].Op)
		}
	}
	return ""
}

// spilledAfter checks a value v the debug info puts in a stack slot (c
// reads it: a register plus an offset, loaded once) against the store
// that fills the slot: when control comes from addr without a branch to a
// store of exactly those bytes, and v's entry of its location list ends
// by the instruction after that store, the debug info gives the slot to v
// only before the store that puts the value there, never after: there it
// holds what another statement left. GCC gives an expansion's parameter
// so where its scheduler moved the spill below the expansion's entry, one
// instruction on (gcc -O2 seed 3107: fn12's b as [CFA-136] over
// [0x182b,0x1833), which mov %rsi,0x8(%rsp) at 0x182e fills; gdb prints
// 0 for 446 too). It returns why the value is not read, or "".
func (vc *valueChecks) spilledAfter(addr uint64, v *types.Var, c spec.Chain, f *spec.Fetch) string {
	if v == nil || v.Loc.To <= addr || len(c.Derefs) != 1 || len(c.Expr) > 0 || c.Reg == "" || f.Size < 1 || f.Size > 8 {
		return ""
	}
	slot, ok := vc.slots.cfaSlot(addr, c.Reg, c.Derefs[0])
	fl := vc.flows.at(addr)
	if !ok || fl == nil {
		return ""
	}
	x := addr
	for range refillLook {
		if x >= v.Loc.To {
			return ""
		}
		if vc.slots.writesSlot(fl, x, slot, f.Size) {
			break
		}
		if len(fl.succ[x]) != 1 {
			return ""
		}
		x = fl.succ[x][0]
	}
	if !vc.slots.storesExactly(fl, x, slot, f.Size) || v.Loc.To > x+uint64(fl.op[x].Len) {
		return ""
	}
	if vars, err := vc.t.varsAt(v.Loc.To); err != nil {
		return ""
	} else if w := sameVar(vars, v); w != nil && w.Loc.String() == v.Loc.String() {
		return "" // the next entry gives the same slot: a new value of v
	}
	return fmt.Sprintf("the debug info gives the %d bytes at CFA%+d up to %#x only, before the store at %#x (%v) fills them: there the slot holds what another statement left",
		f.Size, slot, v.Loc.To, x, fl.op[x])
}
