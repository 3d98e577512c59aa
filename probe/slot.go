package probe

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/spec"
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
func (r *Resolver) mixedSlot(addr uint64, slot, n int64) string {
	fl := r.flowAt(addr)
	if fl == nil || len(fl.indirect) > 0 {
		return ""
	}
	var stores []uint64
	seen := map[uint64]bool{}
	work := append([]uint64{}, fl.pred[addr]...)
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[x] {
			continue
		}
		if seen[x] = true; len(seen) > maxReach {
			return ""
		}
		in := fl.op[x]
		if mem, st := storeTo(in); st && mem.Index == 0 {
			if at, ok := r.cfaSlot(x, gprName(mem.Base), int64(mem.Disp)); ok && at < slot+n && slot < at+int64(in.MemBytes) {
				stores = append(stores, x)
				continue
			}
		}
		work = append(work, fl.pred[x]...)
	}
	if len(stores) < 2 {
		return ""
	}
	exact, other := uint64(0), uint64(0)
	for _, x := range stores {
		mem, _ := storeTo(fl.op[x])
		if at, _ := r.cfaSlot(x, gprName(mem.Base), int64(mem.Disp)); at == slot && int64(fl.op[x].MemBytes) == n {
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

// mixedChain checks a chain that reads a number from a stack slot (a
// register plus an offset, loaded once) with mixedSlot.
func (r *Resolver) mixedChain(addr uint64, c spec.Chain, f *spec.Fetch) string {
	if len(c.Derefs) != 1 || len(c.Expr) > 0 || c.Reg == "" || f.Size < 1 || f.Size > 8 ||
		!strings.ContainsAny(f.Type[:1], "usx") {
		return ""
	}
	slot, ok := r.cfaSlot(addr, c.Reg, c.Derefs[0])
	if !ok {
		return ""
	}
	return r.mixedSlot(addr, slot, f.Size)
}
