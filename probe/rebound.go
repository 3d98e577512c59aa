package probe

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// reboundWindow bounds the instructions the walk back from a call looks
// at for the stores before it (see rebound).
const reboundWindow = 256

// rebound checks a call site's value l of a parameter the callee does
// not receive (a removed one: GCC's clone fn.constprop.N or fn.isra.N
// gives it from its callers' call sites) against the call's own code.
// Where the code between the call before it (or the caller's entry) and
// the call at call stores into memory the callee's code reads and never
// writes (an input the call hands over in memory), the value given must
// be one of those stores' values: a constant only where a store writes
// that constant, an expression of registers only where a store writes a
// value the code does not know to be constant. Where none is, GCC gave
// the removed parameter another call's value: gcc -O2 seed 4642's
// fn12.constprop.0 b at the call at 0x1cce as 105, the constant of the
// call before it, where the code stores RBP for the call (`fn12(b+a,
// a^97)`); gcc -O3 seed 4833's fn09.constprop.0 b at 0x18ee as R12 where
// the code stores 38 (`fn09(a, 38)`); gdb prints the same wrong values.
// It returns why the value is not read, or "".
func (vc *valueChecks) rebound(call uint64, callee *types.Instance, l types.Loc) string {
	c, isConst := constLoc(l)
	ops, _, _ := callerPiece(l)
	fl := vc.flows.at(call)
	if fl == nil || !fl.has(call) {
		return ""
	}
	var seen []string
	for _, m := range vc.inputs(callee) {
		stores, ok := storesBefore(fl, call, m)
		if !ok {
			return "" // a value the code before the call gives unknown
		}
		for _, x := range stores {
			v := vc.facts.storeConst(fl, x, fl.op[x])
			switch {
			case v == nil && !isConst && vc.storedOther(fl, x, call, ops):
				seen = append(seen, fmt.Sprintf("%v by the store at %#x", fl.op[x].Args[1], x))
				continue
			case v == nil && !isConst, v != nil && isConst && sameLow(v, c):
				return ""
			case v == nil:
				seen = append(seen, fmt.Sprintf("%v by the store at %#x", fl.op[x].Args[1], x))
			default:
				seen = append(seen, fmt.Sprintf("%d by the store at %#x", int64(binary.LittleEndian.Uint64(append(slices.Clone(v), make([]byte, 8)...))), x))
			}
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return fmt.Sprintf("as %s, which is not what the call's own code hands %s in memory it reads (%s): another call's value",
		l, callee.Symbol, strings.Join(seen[:min(len(seen), 2)], ", "))
}

// constLoc is l's value when l is a constant.
func constLoc(l types.Loc) (int64, bool) {
	if len(l.Pieces) != 1 {
		return 0, false
	}
	p := l.Pieces[0]
	switch {
	case p.Kind == types.LocConst:
		return p.Offset, true
	case p.Kind == types.LocValue && len(p.Ops) == 1 && p.Ops[0].Code == types.OpConst:
		return p.Ops[0].Value, true
	}
	return 0, false
}

// sameLow reports whether the stored bytes v and the constant c agree in
// their low bytes (at most 4: a store of an int argument widened to a
// long, or the low byte of a char's).
func sameLow(v []byte, c int64) bool {
	n := min(len(v), 4)
	return slices.Equal(v[:n], binary.LittleEndian.AppendUint64(nil, uint64(c))[:n])
}

// inputs are the addresses of memory the instance's code reads by an
// absolute (or rip-relative) address and never writes.
func (vc *valueChecks) inputs(inst *types.Instance) []uint64 {
	fl, err := vc.flows.of(inst)
	if err != nil {
		return nil
	}
	read, written := map[uint64]bool{}, map[uint64]bool{}
	for _, a := range fl.addrs {
		in := fl.op[a]
		if in.Op == x86asm.LEA || in.Op == x86asm.NOP {
			continue
		}
		if m, ok := storeTo(in); ok {
			if g, ok := globalAt(a, in, m); ok {
				written[g] = true
			}
		}
		for _, arg := range in.Args[1:] {
			if m, ok := arg.(x86asm.Mem); ok {
				if g, ok := globalAt(a, in, m); ok {
					read[g] = true
				}
			}
		}
	}
	var out []uint64
	for g := range read {
		if !written[g] {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// globalAt is the address the memory operand m of the instruction in at a
// names when it is absolute (rip-relative, or no base and no index).
func globalAt(a uint64, in x86asm.Inst, m x86asm.Mem) (uint64, bool) {
	switch {
	case m.Segment != 0 || m.Index != 0:
		return 0, false
	case m.Base == x86asm.RIP:
		return uint64(int64(a) + int64(in.Len) + int64(int32(m.Disp))), true
	case m.Base == 0:
		return uint64(int64(int32(m.Disp))), true
	}
	return 0, false
}

// storesBefore are the stores to the global g that the paths from the
// call before the call at call (or from the instance's entry) to it last
// make; ok is false when the paths are not all known, or some make a
// store and others none.
func storesBefore(fl *flow, call, g uint64) (stores []uint64, ok bool) {
	bare := false // a path that makes no store
	ok = fl.walkBack(call, reboundWindow, func(x uint64) walk {
		in := fl.op[x]
		if m, st := storeTo(in); st && in.Op != x86asm.CALL {
			if at, abs := globalAt(x, in, m); abs && at == g {
				stores = append(stores, x)
				return walkStop
			}
		}
		if in.Op == x86asm.CALL || fl.fromBefore(x) {
			bare = true
			return walkStop
		}
		return walkOn
	})
	return stores, ok && !(bare && len(stores) > 0)
}

// storedOther reports whether the store at x hands over another value
// than the call's value ops, an expression of one register at the call
// at call: the stored register and the expression's register are both
// computed (copies, LEA, operations with an immediate: see sliceStep)
// from one register's value that no instruction writes between the two
// reads, and the two differ as functions of it in their low 32 bits
// (gcc -O3 seed 4705: fn10.constprop.0's removed b at main's call at
// 0x14a7 as R13<<1, the binding of the calls before it, where the code
// stores RBP; R13 and RBP both copy R15D, the source's a).
func (vc *valueChecks) storedOther(fl *flow, x, call uint64, ops []types.Op) bool {
	reg, _, ok := oneRegArith(ops)
	src, isReg := fl.op[x].Args[1].(x86asm.Reg)
	if !ok || !isReg || x86.Family(src) < 0 || regByName(reg) == 0 {
		return false
	}
	for _, p := range vc.slicePoints(fl, x, src) {
		for _, q := range vc.slicePoints(fl, call, regByName(reg)) {
			if !vc.sameValue(fl, p, q) && !vc.sameValue(fl, q, p) {
				continue
			}
			for _, v := range probeValues {
				if w, ok := evalArith(ops, q.f(v)); ok && uint32(w) != uint32(p.f(v)) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// regRead is a register family read by the instruction at at, and f the
// value followed as a function of what it reads.
type regRead struct {
	at  uint64
	fam int
	f   func(uint64) uint64
}

// slicePoints are the reads the value reg holds at a comes from: there,
// and up what computed it (see sliceStep), each the one write that
// reaches.
func (vc *valueChecks) slicePoints(fl *flow, a uint64, reg x86asm.Reg) []regRead {
	f := func(v uint64) uint64 { return v }
	out := []regRead{{a, x86.Family(reg), f}}
	for range 8 {
		defs, ok := vc.facts.reachingWrites(fl, a, reg)
		if !ok || len(defs) != 1 {
			break
		}
		in := fl.op[defs[0]]
		d, isReg := in.Args[0].(x86asm.Reg)
		if !isReg || x86.Family(d) != x86.Family(reg) {
			break
		}
		step, _, from, ok := sliceStep(in, d)
		if !ok || x86.Family(from) < 0 {
			break
		}
		outer := f
		f = func(v uint64) uint64 { return outer(step(v)) }
		a, reg = defs[0], from
		out = append(out, regRead{a, x86.Family(from), f})
	}
	return out
}

// sameValue reports whether the reads p and q see one value: one
// register, p's instruction dominates q's and does not write it, and no
// instruction between them does.
func (vc *valueChecks) sameValue(fl *flow, p, q regRead) bool {
	bit := x86.RegSet(1) << p.fam
	if p.fam != q.fam || p.fam < 0 {
		return false
	}
	return p.at == q.at || fl.dominates(p.at, q.at) && x86.Writes(vc.arch, fl.op[p.at], false)&bit == 0 && !fl.writtenBetween(p.at, q.at, bit, vc.arch)
}
