package probe

import (
	"encoding/binary"
	"slices"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/types"
)

// callerWrites reports whether the caller's code stores c's low size
// bytes to one global before each copy of the body, at addrs: for every
// copy, the nearest store to that global among the instructions that
// dominate the copy's site, after the previous copy's site, is a store of
// the immediate c outside the expansion's code (site.Ranges), and no
// other store to it lies on a path from there to the site. A parameter
// the body never uses (its calls' records are the callers') has no store
// in the body; the caller records it before each call (rust-O3 seed
// 2359: movq $0x22 to a global before each of two copies of fn10's
// expansion, whose b the debug info gives as 34 for both). Where the
// calls differ, the caller stores different values there, and the
// check fails.
func (cc *copyConsts) callerWrites(site *types.InlineSite, addrs []uint64, c int64, size int64) bool {
	inst := cc.flows.hostOf(site)
	if inst == nil || size <= 0 || size > 8 || len(addrs) < 2 || !cc.flows.t.decodes() {
		return false
	}
	fl, err := cc.flows.of(inst)
	if err != nil {
		return false
	}
	addrs = slices.Sorted(slices.Values(addrs))
	want := binary.LittleEndian.AppendUint64(nil, uint64(c))[:size]
	var place uint64
	for j, s := range addrs {
		floor := uint64(0)
		if j > 0 {
			floor = addrs[j-1]
		}
		x, to, ok := cc.lastGlobalStore(fl, s, floor, site.Ranges, place)
		if !ok || place != 0 && to != place {
			return false
		}
		place = to
		v := cc.facts.storeConst(fl, x, fl.op[x])
		if len(v) < int(size) || !slices.Equal(v[:size], want) || !fl.onlyStore(s, x, place) {
			return false
		}
	}
	return true
}

// lastGlobalStore is the nearest instruction of the caller's code (not in
// rs) that dominates s, after floor, and stores to a global (to, its
// address): place when place is not 0, any global otherwise. ok is false
// when there is none within constWindow dominators.
func (cc *copyConsts) lastGlobalStore(fl *flow, s, floor uint64, rs [][2]uint64, place uint64) (x, to uint64, ok bool) {
	for _, a := range fl.dominating(s, constWindow) {
		if a <= floor {
			return 0, 0, false
		}
		if holds(rs, a) {
			continue
		}
		if g, isG := globalStore(a, fl.op[a]); isG && (place == 0 || g == place) {
			return a, g, true
		}
	}
	return 0, 0, false
}

// globalStore is the address of the global in, at a, stores to through
// a RIP-relative operand.
func globalStore(a uint64, in x86asm.Inst) (uint64, bool) {
	mem, st := storeTo(in)
	if !st || mem.Base != x86asm.RIP || mem.Index != 0 {
		return 0, false
	}
	return uint64(int64(a) + int64(in.Len) + mem.Disp), true
}

// onlyStore reports whether no path from x to s passes another store to
// the global at place (x dominates s).
func (fl *flow) onlyStore(s, x, place uint64) bool {
	return fl.walkBack(s, constWindow, func(y uint64) walk {
		if y == x {
			return walkStop
		}
		if g, ok := globalStore(y, fl.op[y]); ok && g == place || fl.op[y].Op == x86asm.CALL {
			return walkFail
		}
		return walkOn
	})
}
